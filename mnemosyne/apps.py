from django.apps import AppConfig


class MnemosyneConfig(AppConfig):
    name = "mnemosyne"
    verbose_name = "Mnemosyne"
