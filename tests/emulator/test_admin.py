"""Admin pages of the emulator tables: every model opens, no secrets shown."""

import pytest
from django.contrib import admin
from django.urls import reverse

from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db(transaction=True)

SEEN_IN_ADMIN = {
    "apiclient", "quote", "emulateduser", "virtualaccount", "recipient", "payout", "mailboxmessage",
    "webhookdelivery", "deliveryattempt",
}  # fmt: skip


def test_every_emulator_table_has_a_working_admin_page(client, sandbox, receiver, api_client):
    from staff.models import StaffUser

    sandbox.post(
        "/webhooks/register",
        {
            "webhook_url": receiver.url,
            "secret": "admin-secret",
            "client_uuid": api_client.client_id,
        },
    )
    account_id, recipient_id = sandbox.funded_setup()
    assert sandbox.payout(account_id, {"recipient_id": recipient_id, "amount": "100.00"},
                          sandbox.otp()).status_code == 201  # fmt: skip
    sandbox.control.post("/_control/webhooks/flush")
    registered = {
        model._meta.model_name
        for model in admin.site._registry
        if model._meta.app_label == "emulator"
    }
    assert registered >= SEEN_IN_ADMIN, SEEN_IN_ADMIN - registered
    staff = StaffUser.objects.create_superuser(email="root@example.com", password="x-long-pass-1")
    client = client_signed_in(staff)
    for name in sorted(registered):
        listing = client.get(reverse(f"admin:emulator_{name}_changelist"))
        assert listing.status_code == 200, name
        model = next(m for m in admin.site._registry if m._meta.model_name == name)
        first = model._default_manager.first()
        if first is not None:
            page = client.get(reverse(f"admin:emulator_{name}_change", args=[first.pk]))
            assert page.status_code == 200, name
            assert b"admin-secret" not in page.content, name
