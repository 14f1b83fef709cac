"""API tokens get scopes and an expiry (issue 19).

Tokens created before this migration keep working as `read` + `prepare` (no approving, releasing
or administering: those need a new token created after step-up) and expire 30 days after it runs.
"""

from datetime import timedelta

from django.db import migrations, models
from django.utils import timezone


def limit_existing_tokens(apps, schema_editor):  # type: ignore[no-untyped-def]
    ApiToken = apps.get_model("staff", "ApiToken")
    ApiToken.objects.filter(expires_at__isnull=True).update(
        scopes=["read", "prepare"], expires_at=timezone.now() + timedelta(days=30)
    )


class Migration(migrations.Migration):
    dependencies = [
        ("staff", "0002_apitoken"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="scopes",
            field=models.JSONField(default=list),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="stepped_up_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(limit_existing_tokens, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(),
        ),
    ]
