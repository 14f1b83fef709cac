"""Emails of staff (the failed sign-in notice, admin changes) go out in the recipient's own
language, whatever language the request that caused them spoke (issue 23)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.test import RequestFactory
from django.utils import translation

from staff.change_kinds import role_change_propose
from staff.lockout import failures_notice
from staff.models import StaffUser
from staff.roles import roles_sync
from tests.identity import stepped_up
from tests.staff.second_factor_support import person

pytestmark = pytest.mark.django_db


def _speaking(user: StaffUser, language: str) -> StaffUser:
    user.language = language
    user.save(update_fields=["language"])
    return user


@pytest.mark.parametrize(
    ("language", "subject", "words"),
    [
        ("es", "PayOps: intentos fallidos repetidos", "Hubo 4 intentos fallidos"),
        ("pt-br", "PayOps: tentativas de acesso malsucedidas", "Houve 4 tentativas"),
        ("", "PayOps: repeated failed sign-ins", "There have been 4 failed sign-in attempts"),
    ],
)
def test_the_failed_sign_in_notice_speaks_the_owners_language(
    django_capture_on_commit_callbacks: Any, language: str, subject: str, words: str
) -> None:
    roles_sync()
    owner = _speaking(person("owner@example.test", "finance_approver"), language)
    request = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.30")
    # The request that fails speaks another language: the notice follows its recipient.
    with (
        translation.override("pt-br" if language == "es" else "es"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert failures_notice(username=owner.email, failures=4, request=request)
    (message,) = mail.outbox
    assert message.to == [owner.email]
    assert message.subject.startswith(subject)
    assert words in message.body and "192.0.2.30" in message.body


def test_each_admin_reads_a_proposed_change_in_their_own_language(
    django_capture_on_commit_callbacks: Any,
) -> None:
    roles_sync()
    spanish = _speaking(person("admin-es@example.test", "admin"), "es")
    brazilian = _speaking(person("admin-pt@example.test", "admin"), "pt-br")
    clerk = person("clerk@example.test", "finance_maker")
    with django_capture_on_commit_callbacks(execute=True):
        role_change_propose(user=clerk, role="compliance", by=stepped_up(spanish), grant=True)
    by_recipient = {m.to[0]: m for m in mail.outbox}
    assert set(by_recipient) == {spanish.email, brazilian.email}
    es, pt = by_recipient[spanish.email], by_recipient[brazilian.email]
    assert es.subject.startswith("PayOps: cambio de administración propuesto (Rol)")
    assert "Espera a que otro administrador lo apruebe" in es.body
    assert "Decídalo en la página Cambios." in es.body
    assert pt.subject.startswith("PayOps: alteração administrativa proposta (Papel)")
    assert "Decida na página Alterações." in pt.body
