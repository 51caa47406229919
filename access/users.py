"""Users that own MCP tokens."""

from __future__ import annotations

from django.contrib.auth.models import User


def ensure_token_owner(username: str) -> tuple[User, bool]:
    """Return the user, creating one without a usable password when missing."""
    user = User.objects.filter(username=username).first()
    if user is not None:
        return user, False
    user = User(username=username)
    user.set_unusable_password()
    user.save()
    return user, True
