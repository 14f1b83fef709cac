"""End users carry their own idempotency key (gateway.idempotency.IdempotentModel): added empty
here, filled by 0004, made unique and required by 0005 (one value per row, not one default)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("users", "0002_mirror_fields_blank"),
    ]

    operations = [
        migrations.AddField(
            model_name="enduser",
            name="idempotency_key",
            field=models.UUIDField(editable=False, null=True),
        ),
    ]
