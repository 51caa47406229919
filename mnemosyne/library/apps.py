from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "mnemosyne.library"
    label = "library"
    verbose_name = "Library"
