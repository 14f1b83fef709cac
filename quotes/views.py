"""Quote pages: the builder (HTMX), the list with its filters, one quote with its checks."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from console.lists import filters_by_maker, list_template, page_of
from gateway.models import Environment
from gateway.selectors import environment_current
from quotes import selectors
from quotes.choices import Choices
from quotes.forms import QuoteAmountForm, QuoteFilterForm, QuoteRequestForm
from quotes.models import Quote
from quotes.services import quote_recheck, quote_reprice, quote_request
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.requests import staff_of
from staff.roles import PAYOUT_INITIATE

PAGE_SIZE = 50


def _environment(request: HttpRequest) -> Environment | None:
    return environment_current(user=request.user)


def _get_quote(request: HttpRequest, pk: int) -> Quote:
    try:
        return selectors.quote_detail(environment=_environment(request), pk=pk)
    except Quote.DoesNotExist:
        raise Http404("No such quote in this environment.") from None


def _maker(request: HttpRequest) -> StaffUser:
    """The finance maker asking (403 for anyone else)."""
    user = staff_of(request)
    if not user.has_perm(PAYOUT_INITIATE):
        raise PermissionDenied
    return user


def _maker_quote(request: HttpRequest, pk: int) -> tuple[StaffUser, Quote]:
    """The maker acting on one quote of their environment (403, then 404)."""
    return _maker(request), _get_quote(request, pk)


def card_context(request: HttpRequest, quote: Quote, **extra: Any) -> dict[str, Any]:
    user = staff_of(request)
    return {
        "quote": quote,
        "check": selectors.quote_check(quote),
        "usable": quote.is_usable(),
        "can_change": user.has_perm(PAYOUT_INITIATE),
        "amount_form": extra.pop("amount_form", None)
        or QuoteAmountForm(initial={"amount": quote.requested_amount}, quote=quote),
        **extra,
    }


@login_required
def quote_list(request: HttpRequest) -> HttpResponse:
    user = staff_of(request)
    selectors.require_quote_reader(user)
    environment = _environment(request)
    form, filters, maker = filters_by_maker(
        request,
        QuoteFilterForm,
        selectors.makers(environment),
        corridors=selectors.corridors(environment),
    )
    quotes = selectors.quote_list(
        environment=environment,
        status=filters.get("status") or "",
        corridor=filters.get("corridor") or "",
        maker=maker,
        date_from=filters.get("date_from"),
        date_to=filters.get("date_to"),
    )
    page, query = page_of(request, quotes, PAGE_SIZE)
    selectors.quote_payout_counts(page.object_list)
    context = {
        "form": form,
        "page": page,
        "query": query,
        "environment": environment,
        "can_request": user.has_perm(PAYOUT_INITIATE),
    }
    return render(request, list_template(request, "quotes/quote_list.html"), context)


@login_required
def quote_new(request: HttpRequest) -> HttpResponse:
    """The builder. A change of currency re-renders the fields (rails, networks) over HTMX."""
    user = _maker(request)
    environment = _environment(request)
    choices = Choices(environment)
    quote = None
    if request.method == "POST":
        form = QuoteRequestForm(request.POST, choices=choices)
        if environment is None:
            form.add_error(None, gettext("Choose the environment you work in first."))
        elif form.is_valid():
            try:
                quote = quote_request(by=user, environment=environment, **form.request_values())
            except ServiceError as exc:
                exc.add_to_form(form, rename=QuoteRequestForm.API_NAMES)
            else:
                if not request.htmx:  # type: ignore[attr-defined]
                    return redirect("quotes:detail", pk=quote.pk)
    else:
        initial: dict[str, object] = {"base_currency": "USD", "amount_mode": "source"}
        initial.update({key: value for key, value in request.GET.items() if value})
        form = QuoteRequestForm(initial=initial, choices=choices)
    context: dict[str, Any] = {"form": form, "environment": environment, "quote": quote}
    if quote is not None:
        context.update(card_context(request, quote))
    template = "quotes/quote_builder.html"
    if request.htmx:  # type: ignore[attr-defined]
        template += "#builder"
    return render(request, template, context)


@login_required
def quote_detail(request: HttpRequest, pk: int) -> HttpResponse:
    selectors.require_quote_reader(staff_of(request))
    quote = _get_quote(request, pk)
    template = "quotes/quote_detail.html"
    if request.htmx:  # type: ignore[attr-defined]
        template = "quotes/includes/quote_card.html"
    return render(request, template, card_context(request, quote))


@require_POST
@login_required
def quote_amount(request: HttpRequest, pk: int) -> HttpResponse:
    """Change the amount of an active quote: re-priced upstream, its timer restarted."""
    user, quote = _maker_quote(request, pk)
    form = QuoteAmountForm(request.POST, quote=quote)
    if form.is_valid():
        try:
            quote = quote_reprice(by=user, quote=quote, amount=form.cleaned_data["amount"])
        except ServiceError as exc:
            exc.add_to_form(form)
        else:
            form = QuoteAmountForm(initial={"amount": quote.requested_amount}, quote=quote)
    if not request.htmx and not form.errors:  # type: ignore[attr-defined]
        return redirect("quotes:detail", pk=quote.pk)
    template = "quotes/includes/quote_card.html"
    if not request.htmx:  # type: ignore[attr-defined]
        template = "quotes/quote_detail.html"
    return render(request, template, card_context(request, quote, amount_form=form))


@require_POST
@login_required
def quote_recheck_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Read the quote back from the upstream: its status by the upstream's own clock."""
    user, quote = _maker_quote(request, pk)
    errors: list[str] = []
    try:
        quote = quote_recheck(by=user, quote=quote)
    except ServiceError as exc:
        errors = [item.message for item in exc.errors] or [exc.message]
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect("quotes:detail", pk=quote.pk)
    return render(
        request,
        "quotes/includes/quote_card.html",
        card_context(request, quote, recheck_errors=errors),
    )
