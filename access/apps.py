import sys
from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccessConfig(AppConfig):
    name = "access"
    verbose_name = "Access"

    def ready(self) -> None:
        from access import login_throttle, sign_in_audit  # noqa: F401  (connect their receivers)

        post_migrate.connect(_say_policy_disagreement, sender=self)


def _say_policy_disagreement(sender: Any, **kwargs: Any) -> None:
    """After `migrate`: the recorded access policy is left alone whatever this shell's LIBRARY_ACCESS
    says (access/access_policy.py); a disagreement is said in one line, not acted on."""
    from access.access_policy import disagreement

    if kwargs.get("verbosity", 1) < 1:
        return  # a quiet migrate (`serve` runs one, then refuses to start in its own line)
    said = disagreement()
    if said is not None:
        print(f"note: the recorded access policy was left as it is. {said}", file=sys.stderr)
