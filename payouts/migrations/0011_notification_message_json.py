"""Payout notifications keep their sentence as message and parameters (console.sentences), read
in the reader's language. Existing rows are read back from their English text where it has one
of the known shapes; any other row keeps only its English text, which is still shown."""

import re

from django.db import migrations, models

WAITING = re.compile(r"^Payout (\d+) of (-?\d+(?:\.\d+)?) ([A-Z]{3,5}) waits for approval\.$")
REASONED = {
    re.compile(
        r"^Payout (\d+) was rejected: (.*)$", re.S
    ): "Payout %(id)s was rejected: %(reason)s",
    re.compile(r"^Payout (\d+) was refused: (.*)$", re.S): "Payout %(id)s was refused: %(reason)s",
}
CHARGED = re.compile(r"^Payout (\d+) was charged otherwise than shown\.")
# The tracking's old f"Payout {pk} {status}{': ' + reason}" for a failure or a return.
ENDED = re.compile(r"^Payout (\d+) (failed|returned)(?:: (.*))?$", re.S)


def message_of(text: str) -> dict | None:
    """The stored shape of console.sentences.Summary for an old English text, or None."""
    if match := WAITING.match(text):
        amount = {"amount": match[2], "currency": match[3]}
        return {
            "msgid": "Payout %(id)s of %(amount)s waits for approval.",
            "params": {"id": int(match[1]), "amount": amount},
        }
    for pattern, msgid in REASONED.items():
        if match := pattern.match(text):
            return {"msgid": msgid, "params": {"id": int(match[1]), "reason": match[2]}}
    if match := CHARGED.match(text):
        return {
            "msgid": "Payout %(id)s was charged otherwise than shown: see its page.",
            "params": {"id": int(match[1])},
        }
    if match := ENDED.match(text):
        status = {"label": "payout_status", "value": match[2], "lower": True}
        if match[3]:
            return {
                "msgid": "Payout %(id)s: %(status)s, %(reason)s",
                "params": {"id": int(match[1]), "status": status, "reason": match[3]},
            }
        return {
            "msgid": "Payout %(id)s: %(status)s.",
            "params": {"id": int(match[1]), "status": status},
        }
    return None


def forwards(apps, schema_editor):
    notification = apps.get_model("payouts", "PayoutNotification")
    rows = []
    for row in (
        notification.objects.filter(message_json__isnull=True).only("pk", "message").iterator()
    ):
        row.message_json = message_of(row.message)
        if row.message_json is not None:
            rows.append(row)
    notification.objects.bulk_update(rows, ["message_json"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("payouts", "0010_upstream_times"),
    ]

    operations = [
        migrations.AddField(
            model_name="payoutnotification",
            name="message_json",
            field=models.JSONField(blank=True, null=True),
        ),
        # Backwards: the field goes, the English text stays (nothing to undo row by row).
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
