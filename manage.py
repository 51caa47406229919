#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

import mnemosyne  # noqa: F401  (Python 3.11 support for Django; before Django is imported)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemosyne.project.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A setting that cannot be used: one line naming it, not a traceback.
        sys.exit(f"configuration error: {exc}")


if __name__ == "__main__":
    main()
