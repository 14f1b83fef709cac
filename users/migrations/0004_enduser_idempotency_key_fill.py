"""Each end user's idempotency key: the one its create already used (the gateway's former key
table, scope `user_create`), so a create still in flight is retried with the same key; a new
one for the others."""

import uuid

from django.db import migrations


def fill_keys(apps, schema_editor):  # type: ignore[no-untyped-def]
    EndUser = apps.get_model("users", "EndUser")
    IdempotencyKey = apps.get_model("gateway", "IdempotencyKey")
    used = {
        row.object_id: row.key
        for row in IdempotencyKey.objects.filter(scope="user_create", object_type="users.enduser")
    }
    for end_user in EndUser.objects.filter(idempotency_key__isnull=True).only("pk"):
        end_user.idempotency_key = used.get(str(end_user.pk)) or uuid.uuid4()
        end_user.save(update_fields=["idempotency_key"])


class Migration(migrations.Migration):
    dependencies = [
        ("users", "0003_enduser_idempotency_key"),
        ("gateway", "0004_environment_verification_email"),
    ]

    operations = [
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
    ]
