from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("library", "0014_item_collection_title_id")]

    operations = [
        migrations.CreateModel(
            name="WorkerBeat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(help_text="host:pid", max_length=200, unique=True)),
                ("started_at", models.DateTimeField(auto_now_add=True)),
                ("seen_at", models.DateTimeField()),
            ],
        ),
    ]
