from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "mnemosyne.profiles"
    label = "profiles"
    verbose_name = "Profiles"
