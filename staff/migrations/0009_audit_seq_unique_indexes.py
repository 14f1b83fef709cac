"""`seq` unique now every row has one; the audit page's filter indexes."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("staff", "0008_audit_chain_before_after")]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="seq",
            field=models.PositiveBigIntegerField(editable=False, unique=True),
        ),
        migrations.AddIndex(
            model_name="auditentry",
            index=models.Index(fields=["actor", "-at"], name="audit_actor_at"),
        ),
        migrations.AddIndex(
            model_name="auditentry",
            index=models.Index(fields=["target_type", "target_id", "-at"], name="audit_target_at"),
        ),
    ]
