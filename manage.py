#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemosyne.settings")
    from django.core.management import execute_from_command_line

    import mnemosyne  # noqa: F401  (Python 3.11 support for Django; must come first)

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
