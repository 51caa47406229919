from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("library", "0013_document_identity_and_pages")]

    operations = [
        migrations.AddIndex(
            model_name="item",
            index=models.Index(fields=["collection", "title", "id"], name="item_collection_title_id"),
        ),
    ]
