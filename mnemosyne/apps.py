import sys

from django.apps import AppConfig


class MnemosyneConfig(AppConfig):
    name = "mnemosyne"
    verbose_name = "Mnemosyne"

    def ready(self) -> None:
        # A background worker (`manage.py db_worker`) says it is alive (ingestion/worker_beats.py).
        if len(sys.argv) > 1 and sys.argv[1] == "db_worker":
            from mnemosyne.ingestion import worker_beats

            worker_beats.start()
