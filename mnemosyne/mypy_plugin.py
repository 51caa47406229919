"""mypy entry point for the django-stubs plugin, which imports Django: install the 3.11 shim first."""

from mnemosyne.lib import py311

py311.install()

from mypy_django_plugin.main import plugin  # noqa: E402

__all__ = ["plugin"]
