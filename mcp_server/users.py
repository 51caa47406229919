"""Users that own MCP tokens."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser


def ensure_token_owner(username: str) -> tuple[AbstractBaseUser, bool]:
    """Return the user, creating one without a usable password when missing."""
    user_model = get_user_model()
    user = user_model.objects.filter(username=username).first()
    if user is not None:
        return user, False
    user = user_model(username=username)
    user.set_unusable_password()
    user.save()
    return user, True
