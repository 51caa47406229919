"""python manage.py access_policy [open | grants [--seed-from-credentials] [--dry-run]] [--yes]

Without a policy: says which policy is recorded for this database, since when and by whom, and
whether this shell's LIBRARY_ACCESS agrees. With one: records it — the only way the policy
changes (access/policy_switch.py), one audit row. Running servers follow within seconds;
a server whose LIBRARY_ACCESS says otherwise refuses its next start until that is unset or changed.

--seed-from-credentials (only on the switch from open to grants) first grants each owner of a live
token or OAuth grant what it shows: reader (editor with the write scope) on the libraries it is
confined to, reader on the libraries an unconfined one's owner is recorded using in the query log.
--dry-run lists what it would grant and changes nothing. The switch to open lets every active
user read every library, so it needs --yes.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access import access_policy
from access.models import AccessPolicyState
from access.policy_switch import SwitchRefused, switch
from mnemosyne.lib.schema import require_current_schema


class Command(BaseCommand):
    help = "Show or change the library access policy recorded for this database (open or grants)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("policy", nargs="?", default="", help="open or grants; none: show the policy.")
        parser.add_argument(
            "--seed-from-credentials",
            action="store_true",
            help="On the switch to grants: grant what live credentials are confined to or were seen using.",
        )
        parser.add_argument("--dry-run", action="store_true", help="List what would change; change nothing.")
        parser.add_argument("--yes", action="store_true", help="Confirm the switch to open.")

    def handle(self, *args: Any, **options: Any) -> None:
        require_current_schema()
        wanted = options["policy"].strip().lower()
        if not wanted:
            if options["seed_from_credentials"] or options["dry_run"] or options["yes"]:
                raise CommandError("name the policy to switch to: open or grants")
            self._show()
            return
        confirmed = options["yes"] or options["dry_run"]
        if (
            wanted == access_policy.OPEN
            and not confirmed
            and access_policy.recorded() == access_policy.GRANTS
        ):
            raise CommandError(
                "the switch to open lets every active user read every library; add --yes to make it"
            )
        try:
            done = switch(
                wanted,
                actor="manage.py access_policy",
                seed=options["seed_from_credentials"],
                dry_run=options["dry_run"],
            )
        except SwitchRefused as exc:
            raise CommandError(str(exc)) from None
        for line in done.granted:
            self.stdout.write(line)
        if options["seed_from_credentials"] and not done.granted:
            self.stdout.write(
                "no grant to seed: no live credential is confined to or was seen using a library"
            )
        verb = "would record" if done.dry_run else "recorded"
        if done.changed:
            self.stdout.write(f"{verb}: the access policy {done.before} → {done.after}")
        else:
            self.stdout.write(f"{verb}: the access policy stays {done.after}")
        said = None if done.dry_run else access_policy.disagreement()
        if said is not None:
            self.stderr.write(f"note: {said}")

    def _show(self) -> None:
        state = AccessPolicyState.objects.order_by("pk").first()
        if state is None:
            self.stdout.write(
                f"no access policy recorded: this database is under {access_policy.in_force()} "
                "(record one with `manage.py access_policy open|grants`)"
            )
        else:
            by = f" by {state.changed_by}" if state.changed_by else ""
            self.stdout.write(
                f"access policy: {state.policy} (recorded {state.changed_at:%Y-%m-%d %H:%M}{by})"
            )
        said = access_policy.disagreement()
        if said is not None:
            self.stderr.write(f"note: {said}")
