"""The audit trail gets before/after and its hash chain; existing entries are chained in id order
(ADR 0019). `seq` becomes unique in the next migration, once every row has one."""

from django.db import migrations, models

from staff.audit_chain import GENESIS_HASH, HASHED_FIELDS, entry_hash_of


def chain_existing(apps, schema_editor):
    AuditEntry = apps.get_model("staff", "AuditEntry")
    prev = GENESIS_HASH
    for seq, entry in enumerate(AuditEntry.objects.order_by("id").iterator(chunk_size=2000), 1):
        entry.seq = seq
        entry.prev_hash = prev
        entry.entry_hash = entry_hash_of({name: getattr(entry, name) for name in HASHED_FIELDS})
        entry.save(update_fields=["seq", "prev_hash", "entry_hash"])
        prev = entry.entry_hash


class Migration(migrations.Migration):
    dependencies = [("staff", "0007_admin_change_proposals")]

    operations = [
        migrations.AddField(
            model_name="auditentry", name="before", field=models.JSONField(blank=True, null=True)
        ),
        migrations.AddField(
            model_name="auditentry", name="after", field=models.JSONField(blank=True, null=True)
        ),
        migrations.AddField(
            model_name="auditentry",
            name="seq",
            field=models.PositiveBigIntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="prev_hash",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="auditentry",
            name="entry_hash",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.RunPython(chain_existing, migrations.RunPython.noop, elidable=False),
    ]
