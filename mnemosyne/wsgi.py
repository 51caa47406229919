"""WSGI entry point for the Django admin (optional in production: gunicorn mnemosyne.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemosyne.settings")

application = get_wsgi_application()
