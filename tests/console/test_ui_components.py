"""The shared UI set: formatting filters, component includes, error pages, log lines, admin."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django import forms
from django.template import Context, Template
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from console.templatetags.ui import count, countdown_words, duration, money, status_tone, when

pytestmark = pytest.mark.django_db


def render(source: str, **context: Any) -> str:
    return Template("{% load ui %}" + source).render(Context(context)).strip()


# --- Formatting filters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (Decimal("1234.56"), "USD", "1,234.56 USD"),
        (Decimal("1234567.5"), "mxn", "1,234,567.50 MXN"),
        (Decimal("0.005"), "USD", "0.01 USD"),  # half-up, as the upstream rounds
        (Decimal("2.675"), "USD", "2.68 USD"),  # a float would have said 2.67
        (Decimal("-1000"), "COP", "-1,000.00 COP"),
        ("999999.99", "BRL", "999,999.99 BRL"),
        (12, "USD", "12.00 USD"),
        (Decimal("12345678901234567890.01"), "USD", "12,345,678,901,234,567,890.01 USD"),
    ],
)
def test_money_is_decimal_exact_grouped_and_always_names_its_currency(
    amount: object, currency: str, shown: str
) -> None:
    assert money(amount, currency) == shown


def test_money_without_an_amount_or_a_currency_says_so() -> None:
    assert money(None, "USD") == "—"
    assert money("not a number", "USD") == "—"
    assert money(Decimal("5"), "") == "5.00 (no currency)"


def test_counts_have_thousands_separators() -> None:
    assert count(0) == "0"
    assert count(999) == "999"
    assert count(1000) == "1,000"
    assert count(10_000) == "10,000"
    assert count(1234567) == "1,234,567"
    assert count(-4321) == "-4,321"
    assert count(None) == "—"


def test_times_name_their_zone() -> None:
    moment = datetime(2026, 11, 23, 17, 26, 5, tzinfo=UTC)
    assert when(moment) == "2026-11-23 17:26 UTC"
    assert when(moment, "seconds") == "2026-11-23 17:26:05 UTC"
    with timezone.override("America/Mexico_City"):
        assert when(moment) == "2026-11-23 11:26 CST"
    assert when(None) == "—"


def test_countdown_text_matches_the_script() -> None:
    assert countdown_words(0) == "expired"
    assert countdown_words(-5, "quote expired") == "quote expired"
    assert countdown_words(65) == "1:05"
    assert countdown_words(3723) == "1:02:03"


def test_status_words_get_one_tone_each_and_unknown_reads_as_error() -> None:
    assert status_tone("ok") == "ok"
    assert status_tone("Stale") == "warning"
    assert status_tone("skipped") == "muted"
    # An alert that resolved is good news; an info-severity rule is no error.
    assert status_tone("resolved") == "ok"
    assert status_tone("info") == "info"
    assert status_tone("exploded") == "error"


# --- Component includes --------------------------------------------------------------------


def test_button_component_renders_kinds_and_links() -> None:
    assert render('{% include "includes/button.html" with label="Save" %}') == (
        '<button type="submit" class="button">Save</button>'
    )
    html = render(
        '{% include "includes/button.html" with label="Go" href="/x/" kind="secondary" '
        'size="small" %}'
    )
    assert html == '<a class="button button-secondary button-small" href="/x/">Go</a>'
    html = render(
        '{% include "includes/button.html" with label="Yes" kind="danger" name="confirm" '
        'value="yes" %}'
    )
    assert 'class="button button-danger"' in html and 'name="confirm" value="yes"' in html


def test_money_time_badge_and_countdown_components() -> None:
    html = render(
        '{% include "includes/money.html" with amount=a currency="USD" %}', a=Decimal("-5")
    )
    assert html == '<span class="money money-negative">-5.00 USD</span>'
    moment = datetime(2026, 11, 23, 17, 26, tzinfo=UTC)
    html = render('{% include "includes/time.html" with value=t %}', t=moment)
    assert html == '<time datetime="2026-11-23T17:26:00+00:00">2026-11-23 17:26 UTC</time>'
    assert render('{% include "includes/badge.html" with status="stale" %}') == (
        '<span class="badge badge-warning">stale</span>'
    )
    soon = timezone.now() + timedelta(minutes=10, seconds=30)
    html = render('{% include "includes/countdown.html" with until=t %}', t=soon)
    assert "data-countdown" in html and f'datetime="{soon.isoformat()}"' in html
    assert ">10:" in html and "countdown-expired" not in html
    past = timezone.now() - timedelta(seconds=1)
    html = render('{% include "includes/countdown.html" with until=t %}', t=past)
    assert "countdown-expired" in html and ">expired</time>" in html


class _Sample(forms.Form):
    amount = forms.DecimalField(help_text="In USD.")
    note = forms.CharField(required=False)

    def clean(self) -> dict[str, Any]:
        raise forms.ValidationError("The whole form is wrong.")


def test_form_component_shows_each_error_once_on_its_field() -> None:
    form = _Sample({"amount": "abc"})
    form.is_valid()
    html = render('{% include "includes/form_fields.html" with form=form %}', form=form)
    assert html.count("The whole form is wrong.") == 1
    amount = html.split('data-field="amount"')[1].split('data-field="note"')[0]
    assert "Enter a number." in amount and 'aria-invalid="true"' in amount
    assert 'aria-describedby="id_amount_helptext' in amount


# --- Shell pages and logs ------------------------------------------------------------------


def test_login_error_shows_once(client: Client, demo_staff: dict[str, Any]) -> None:
    response = client.post(
        reverse("staff:login"), {"username": "maker@payops.local", "password": "wrong-one"}
    )
    html = response.content.decode()
    assert html.count("Wrong email or password.") == 1
    assert 'data-testid="login-error"' in html


def test_get_on_a_post_only_page_renders_a_405_page_in_the_shell(
    client_for: Callable[[str], Client],
) -> None:
    response = client_for("finance_maker").get(reverse("staff:logout"))
    assert response.status_code == 405
    assert response["Allow"] == "POST, OPTIONS"
    html = response.content.decode()
    assert 'data-testid="method-not-allowed"' in html
    assert '<nav class="sidebar"' in html  # the shell, with the navigation
    assert "it accepts POST, OPTIONS" in html


def test_the_api_keeps_its_own_405(client_for: Callable[[str], Client]) -> None:
    response = client_for("finance_maker").post("/api/v1/me")
    assert response.status_code == 405
    assert "<html" not in response.content.decode()


def test_a_refused_request_is_logged_as_one_line(
    client_for: Callable[[str], Client], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="django.request")
    response = client_for("finance_maker").get(reverse("gateway:environments"))
    assert response.status_code == 403
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info is None and record.exc_text is None
    line = logging.Formatter("%(levelname)s %(message)s").format(record)
    assert line == f"WARNING Forbidden (Permission denied): {reverse('gateway:environments')}"
    assert "\n" not in line and "Traceback" not in line


def test_a_server_error_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    from console.log_filters import OneLineClientErrors

    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        record = logging.LogRecord(
            "django.request",
            logging.ERROR,
            __file__,
            1,
            "Internal Server Error: %s",
            ("/x",),
            sys.exc_info(),
        )
    record.status_code = 500
    assert OneLineClientErrors().filter(record)
    assert record.exc_info is not None


def test_call_log_shows_a_bad_filter_on_its_field(client_for: Callable[[str], Client]) -> None:
    client = client_for("admin")
    response = client.get(reverse("gateway:call_log"), {"date": "yesterday", "status_class": "9xx"})
    assert response.status_code == 200
    html = response.content.decode()
    date_field = html.split('data-field="date"')[1].split("</div>")[0]
    assert "Enter the date as yyyy-mm-dd" in date_field
    status_field = html.split('data-field="status_class"')[1].split("</div>")[0]
    assert "Select a valid choice." in status_field
    # The same errors come back in the HTMX fragment, which carries the filter bar with it.
    fragment = client.get(
        reverse("gateway:call_log"), {"date": "yesterday"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and "Enter the date as yyyy-mm-dd" in fragment


# --- Django admin --------------------------------------------------------------------------


def test_admin_shows_the_environment_badge_outside_its_title_and_times_with_their_zone(
    client_for: Callable[[str], Client], demo_staff: dict[str, Any]
) -> None:
    from gateway.services.environments import environment_create

    environment_create(
        by=None,
        name="Badge sandbox",
        kind="sandbox",
        base_url="https://api.example.test",
        client_id="c",
        password="p",
        api_key="k",
    )
    client = client_for("admin")
    html = client.get(reverse("admin:index")).content.decode()
    title = html.split('id="site-name"')[1].split("</div>")[0]
    assert "env-badge" not in title
    assert 'data-testid="env-badge"' in html
    html = client.get(reverse("admin:staff_staffuser_changelist")).content.decode()
    assert " UTC</td>" in html or " UTC</" in html


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (0.4, "ms", "0.4 ms"),
        (120, "ms", "120 ms"),
        (119.6, "ms", "120 ms"),
        (1234.5, "ms", "1.2 s"),
        (3.25, "s", "3.3 s"),
        (125, "s", "2 min 5 s"),
        (3720, "s", "1 h 2 min"),
        (900, "s", "15 min"),
        (7200, "s", "2 h"),
        (None, "ms", "—"),
    ],
)
def test_duration_reads_as_a_person_says_it(value: object, unit: str, shown: str) -> None:
    assert duration(value, unit) == shown


def test_an_applied_change_reads_as_success_and_a_withdrawn_one_as_muted() -> None:
    # staff.ChangeProposal's states: "Applied" was shown in the error tone (issue 30).
    assert status_tone("applied") == "ok"
    assert status_tone("withdrawn") == "muted"
