"""An alert's summary as a message (translated when read) and the environment its subject is in.

Existing alerts keep their English `summary` (no message: they are read as they were written);
their environment is filled from the subject (`environment:<id>`, `payout:<id>`)."""

import django.db.models.deletion
from django.db import migrations, models


def environments_from_subjects(apps, schema_editor):
    Alert = apps.get_model("alerts", "Alert")
    Environment = apps.get_model("gateway", "Environment")
    Payout = apps.get_model("payouts", "Payout")
    existing = set(Environment.objects.values_list("pk", flat=True))
    by_subject = {}
    payout_ids = set()
    for subject in Alert.objects.values_list("subject", flat=True).distinct():
        kind, _sep, key = subject.partition(":")
        if not key.isdigit():
            continue
        if kind == "environment" and int(key) in existing:
            by_subject[subject] = int(key)
        elif kind == "payout":
            payout_ids.add(int(key))
    payouts = Payout.objects.filter(pk__in=payout_ids).values_list("pk", "environment_id")
    for payout_id, environment_id in payouts:
        by_subject[f"payout:{payout_id}"] = environment_id
    for subject, environment_id in by_subject.items():
        Alert.objects.filter(subject=subject).update(environment_id=environment_id)


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0001_initial"),
        ("gateway", "0005_delete_idempotencykey"),
        ("payouts", "0009_list_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="alert",
            name="environment",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="gateway.environment",
            ),
        ),
        migrations.AddField(
            model_name="alert",
            name="summary_message",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(environments_from_subjects, migrations.RunPython.noop),
    ]
