"""End users' idempotency keys, filled by 0004, become required and unique."""

import uuid

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("users", "0004_enduser_idempotency_key_fill"),
    ]

    operations = [
        migrations.AlterField(
            model_name="enduser",
            name="idempotency_key",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
