"""Recipients registered before dual control were accepted under the rules of their time: they
stay payable, marked approved by "migration", with a line on their timeline saying so."""

from django.db import migrations
from django.utils import timezone

NOTE = "migration"
SUMMARY = (
    "Approved by migration: registered before dual control on bank details, "
    "accepted under the rules of that time"
)


def approve_existing(apps, schema_editor):  # type: ignore[no-untyped-def]
    Recipient = apps.get_model("accounts", "Recipient")
    Timeline = apps.get_model("accounts", "RecipientTimelineEntry")
    now = timezone.now()
    existing = list(
        Recipient.objects.filter(status="pending_approval").values_list("pk", flat=True)
    )
    Recipient.objects.filter(pk__in=existing).update(
        status="approved", approved_at=now, approval_note=NOTE
    )
    Timeline.objects.bulk_create(
        Timeline(recipient_id=pk, kind="system", summary=SUMMARY, at=now) for pk in existing
    )


class Migration(migrations.Migration):
    dependencies = [("accounts", "0005_recipient_dual_control")]

    operations = [migrations.RunPython(approve_existing, migrations.RunPython.noop)]
