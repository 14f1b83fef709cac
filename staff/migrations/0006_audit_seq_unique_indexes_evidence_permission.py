"""`seq` unique now every row has one; the audit page's filter indexes; the evidence permission."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("staff", "0005_audit_chain_before_after")]

    operations = [
        migrations.AlterModelOptions(
            name="staffuser",
            options={
                "ordering": ("email",),
                "permissions": [
                    ("view_finance", "Can see finance pages (quotes, payouts)"),
                    ("initiate_payout", "Can create quotes and initiate payouts"),
                    ("approve_payout", "Can approve or reject payouts"),
                    ("view_compliance", "Can see end users, accounts and recipients"),
                    (
                        "manage_end_users",
                        "Can create and update end users, accounts and recipients",
                    ),
                    (
                        "manage_environments",
                        "Can manage upstream environments and their credentials",
                    ),
                    ("view_call_log", "Can see the upstream call log"),
                    ("view_system_health", "Can see system health"),
                    ("view_audit_log", "Can see the audit trail"),
                    ("view_evidence", "Can download a payout's evidence pack"),
                ],
                "verbose_name": "staff user",
                "verbose_name_plural": "staff users",
            },
        ),
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
