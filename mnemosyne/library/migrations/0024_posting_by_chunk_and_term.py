"""The postings' per-chunk index keyed by chunk, then term (it covers tf and dl), so the full-text
leg's rescoring finds a candidate's postings of the few terms it needs in one probe. Built beside
the old one without blocking writes, then the old one dropped (neither step holds a lock that
stops ingest: a library of a million chunks takes minutes to index)."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("library", "0023_reembed_jobs"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="posting",
            index=models.Index(fields=["chunk", "term"], include=("tf", "dl"), name="posting_by_chunk_term"),
        ),
        RemoveIndexConcurrently(model_name="posting", name="posting_by_chunk"),
    ]
