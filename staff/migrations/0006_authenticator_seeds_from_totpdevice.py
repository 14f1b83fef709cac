"""Move django-otp's TOTPDevice rows (confirmed and pending) into staff.AuthenticatorDevice,
encrypting each seed (staff.crypto), then delete them: no plain seed stays in the database.

Same person, name, state, drift, last used step (a code used before stays used), throttle and
timestamps. A session verified by an old device is no longer verified (its device is gone): that
person types a code once more. Reversing puts the rows back (decrypted), for a rollback.
"""

from typing import Any

from django.db import migrations

from staff import crypto

_COPIED = (
    "user_id",
    "name",
    "confirmed",
    "drift",
    "last_t",
    "throttling_failure_timestamp",
    "throttling_failure_count",
    "created_at",
    "last_used_at",
)


def totp_devices_encrypt(apps: Any, schema_editor: Any) -> None:
    old_model = apps.get_model("otp_totp", "TOTPDevice")
    new_model = apps.get_model("staff", "AuthenticatorDevice")
    old_rows = old_model.objects.using(schema_editor.connection.alias).order_by("pk")
    for old in old_rows.iterator():
        values = {name: getattr(old, name) for name in _COPIED}
        # Seeds are hex (django-otp validates it); stored as the encrypted hex, as new ones are.
        seed_hex = bytes.fromhex(old.key).hex()
        new_model.objects.using(schema_editor.connection.alias).create(
            seed_encrypted=crypto.encrypt(seed_hex), **values
        )
    old_rows.delete()


def totp_devices_decrypt(apps: Any, schema_editor: Any) -> None:
    old_model = apps.get_model("otp_totp", "TOTPDevice")
    new_model = apps.get_model("staff", "AuthenticatorDevice")
    new_rows = new_model.objects.using(schema_editor.connection.alias).order_by("pk")
    for new in new_rows.iterator():
        values = {name: getattr(new, name) for name in _COPIED}
        old_model.objects.using(schema_editor.connection.alias).create(
            key=crypto.decrypt(new.seed_encrypted), **values
        )
    new_rows.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("staff", "0005_authenticator_device"),
        ("otp_totp", "0003_add_timestamps"),
    ]

    operations = [migrations.RunPython(totp_devices_encrypt, totp_devices_decrypt)]
