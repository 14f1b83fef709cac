"""Rotating a webhook secret from the page asks first, and says how long the old one still works."""

from __future__ import annotations

import pytest
from django.test import override_settings

from staff.changes import changes_apply_due
from staff.models import AuditEntry, ChangeProposal
from webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db


def _rotate_url(endpoint: WebhookEndpoint) -> str:
    return f"/webhooks/endpoints/{endpoint.environment.pk}/rotate/"


def test_the_endpoints_page_links_to_a_confirmation_not_a_rotation(client_for, endpoint) -> None:
    html = client_for("admin").get("/webhooks/").content.decode()
    assert f'href="{_rotate_url(endpoint)}"' in html
    assert f'action="{_rotate_url(endpoint)}"' not in html


@override_settings(WEBHOOKS_ROTATION_OVERLAP_SECONDS=900)
def test_the_confirmation_explains_the_overlap_window(client_for, endpoint) -> None:
    response = client_for("admin").get(_rotate_url(endpoint))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Overlap window: 15 min." in html
    assert "stays accepted for 15 min after the rotation" in html
    assert 'name="confirm" value="yes"' in html


def test_a_post_without_the_confirmation_rotates_nothing(client_for, endpoint) -> None:
    before = WebhookEndpoint.objects.get(pk=endpoint.pk)
    response = client_for("admin").post(_rotate_url(endpoint))
    assert response.status_code == 200 and b"Overlap window" in response.content
    after = WebhookEndpoint.objects.get(pk=endpoint.pk)
    assert after.secret_encrypted == before.secret_encrypted
    assert not after.pending_secret_encrypted
    assert not AuditEntry.objects.filter(action__startswith="webhooks.").exists()


def test_the_confirmed_post_proposes_the_rotation_then_it_runs_once_the_wait_ends(
    client_for, endpoint
) -> None:
    # A rotation is an admin change (staff.changes): proposed now; the demo's only admin waits.
    response = client_for("admin").post(_rotate_url(endpoint), {"confirm": "yes"}, follow=True)
    assert response.redirect_chain[-1][0] == "/webhooks/"
    assert "Proposed" in response.content.decode()
    assert not WebhookEndpoint.objects.get(pk=endpoint.pk).pending_secret_encrypted
    proposal = ChangeProposal.objects.get(kind="webhooks.endpoint")
    assert proposal.payload["rotate"] is True
    # The upstream of this fixture is unreachable: the new secret is stored pending (the
    # rotation ran) and the proposal says what failed.
    changes_apply_due(now=proposal.apply_after)
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).pending_secret_encrypted
    proposal.refresh_from_db()
    assert proposal.state == ChangeProposal.State.FAILED


def test_the_confirmation_needs_the_manage_permission(client_for, endpoint) -> None:
    assert client_for("compliance").get(_rotate_url(endpoint)).status_code == 403
