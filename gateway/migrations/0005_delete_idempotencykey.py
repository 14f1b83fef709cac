"""The per-object key table goes: keys live on their business rows (gateway.idempotency), and the
end users' keys were copied onto their rows first (users 0004)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("gateway", "0004_environment_verification_email"),
        ("users", "0004_enduser_idempotency_key_fill"),
    ]

    operations = [
        migrations.DeleteModel(
            name="IdempotencyKey",
        ),
    ]
