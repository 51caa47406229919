"""WSGI entry point for the Django admin (optional in production: gunicorn mnemosyne.project.wsgi)."""

import os

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; before Django is imported)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemosyne.project.settings")

from django.core.wsgi import get_wsgi_application

application = get_wsgi_application()
