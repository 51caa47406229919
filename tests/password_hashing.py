"""The product's password hasher at one round, for the tests' own people: Django's PBKDF2 takes
about half a second a password here (1,500,000 rounds), and most tests make or sign in several.

The hash names its algorithm and its rounds ("pbkdf2_sha256$1$…"), so a server process the tests
start — on the product's settings and hasher — verifies these passwords as it would any other."""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneRoundPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1
