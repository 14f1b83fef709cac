"""Gateway pages: environments (list, add, edit, test, switch), quota gauge and the call log."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from gateway import selectors
from gateway.forms import CallLogFilterForm, EnvironmentForm
from gateway.models import Environment
from gateway.services.environment_changes import environment_change
from gateway.services.environments import (
    EnvironmentSwitchRefused,
    ProductionNotConfirmed,
    environment_create,
    environment_switch,
    environment_test_connection,
)
from staff.changes import proposal_message
from staff.errors import ServiceError
from staff.models import ChangeProposal
from staff.roles import CALL_LOG_VIEW, ENVIRONMENTS_MANAGE
from staff.step_up import StepUpRequired

CALL_LOG_PAGE_SIZE = 50


@login_required
@permission_required(ENVIRONMENTS_MANAGE, raise_exception=True)
def environment_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "gateway/environment_list.html",
        {"rows": selectors.environment_rows()},
    )


@login_required
@permission_required(ENVIRONMENTS_MANAGE, raise_exception=True)
def environment_add(request: HttpRequest) -> HttpResponse:
    form = EnvironmentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        environment = environment_create(
            by=request.user,  # type: ignore[arg-type]
            name=data["name"],
            kind=data["kind"],
            base_url=data["base_url"],
            client_id=data["client_id"],
            password=data["password"],
            api_key=data["api_key"],
            rate_per_second=data["rate_per_second"],
            max_concurrent=data["max_concurrent"],
            weekly_budget=data["weekly_budget"],
            background_share=data["background_share"],
            is_active=data["is_active"],
        )
        messages.success(
            request, gettext("Environment %(name)s added.") % {"name": environment.name}
        )
        return redirect("gateway:environments")
    return render(request, "gateway/environment_form.html", {"form": form, "environment": None})


@login_required
@permission_required(ENVIRONMENTS_MANAGE, raise_exception=True)
def environment_edit(request: HttpRequest, pk: int) -> HttpResponse:
    environment = get_object_or_404(Environment, pk=pk)
    form = EnvironmentForm(request.POST or None, instance=environment)
    if request.method == "POST" and form.is_valid():
        # The ModelForm has already copied the cleaned values onto `environment`; the service
        # reloads the row under a lock and applies them there, so nothing is saved twice.
        try:
            proposal = environment_change(
                environment=environment,
                by=request.user,  # type: ignore[arg-type]
                **form.settings_values(),
                **form.credentials(),
            )
        except StepUpRequired:
            raise  # the middleware sends the person to the step-up prompt
        except ServiceError as exc:
            exc.add_to_form(form)
        else:
            name = {"value": form.cleaned_data["name"]}
            if proposal is None or proposal.state == ChangeProposal.State.APPLIED:
                messages.success(request, gettext("Environment %(value)s saved.") % name)
            elif proposal.state != ChangeProposal.State.FAILED:
                # Not saved yet: the guarded part waits for another admin (staff.changes).
                messages.warning(
                    request,
                    gettext(
                        "The change to environment %(value)s waits for a second admin's "
                        "approval; it applies only once another admin approves it."
                    )
                    % name,
                )
            if proposal is not None:
                messages.info(request, proposal_message(proposal))
            return redirect("gateway:environments")
    return render(
        request, "gateway/environment_form.html", {"form": form, "environment": environment}
    )


@require_POST
@login_required
@permission_required(ENVIRONMENTS_MANAGE, raise_exception=True)
def environment_test(request: HttpRequest, pk: int) -> HttpResponse:
    """Authenticate against the environment through the gateway; the result replaces a fragment."""
    environment = get_object_or_404(Environment, pk=pk)
    result = environment_test_connection(
        environment=environment,
        by=request.user,  # type: ignore[arg-type]
    )
    # The row is re-rendered: the test may have verified (or un-verified) the environment.
    rows = selectors.environment_rows()
    row = next(row for row in rows if row.environment.pk == environment.pk)
    context = {"env": row.environment, "up": row.upstream, "result": result}
    context["tested_pk"] = environment.pk
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "gateway/environment_list.html#row", context)
    context["rows"] = rows
    return render(request, "gateway/environment_list.html", context)


@login_required
def environment_choose(request: HttpRequest) -> HttpResponse:
    """Any staff member picks the environment they work in: verified ones (admins see all)."""
    return render(
        request,
        "gateway/environment_choose.html",
        {"environments": selectors.environment_choices(user=request.user)},
    )


def _next_url(request: HttpRequest) -> str:
    target = request.POST.get("next") or reverse("gateway:environment_choose")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = reverse("gateway:environment_choose")
    return target


@require_POST
@login_required
def environment_switch_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Switch; a switch to production first shows a confirmation page that posts back here."""
    environment = get_object_or_404(Environment, pk=pk)
    target = _next_url(request)
    try:
        environment_switch(
            user=request.user,  # type: ignore[arg-type]
            environment=environment,
            confirmed=request.POST.get("confirm") == "yes",
        )
    except ProductionNotConfirmed:
        return render(
            request,
            "gateway/environment_switch_confirm.html",
            {"environment": environment, "next": target},
        )
    except EnvironmentSwitchRefused as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, gettext("You now work in %(name)s.") % {"name": environment.name})
    if request.htmx:  # type: ignore[attr-defined]
        # The badge lives in the page shell: reload the whole page rather than swap a fragment.
        response = HttpResponse(status=204)
        response["HX-Redirect"] = target
        return response
    return HttpResponseRedirect(target)


def quota_panel_context(request: HttpRequest) -> dict[str, Any]:
    """Context of the dashboard's quota panel (console.dashboard checks the permission)."""
    return {"gauges": selectors.quota_gauges(now=timezone.now())}


@login_required
@permission_required(ENVIRONMENTS_MANAGE, raise_exception=True)
def quota(request: HttpRequest) -> HttpResponse:
    gauges = selectors.quota_gauges(now=timezone.now())
    return _page_or_fragment(request, "gateway/quota.html", "gauges", {"gauges": gauges})


@login_required
@permission_required(CALL_LOG_VIEW, raise_exception=True)
def call_log(request: HttpRequest) -> HttpResponse:
    form = CallLogFilterForm(request.GET or None)
    # A bad filter is shown on its field (the filter bar renders the errors); the valid ones
    # still apply, so the page never pretends to filter by something it ignored.
    filters: dict[str, Any] = {}
    if form.is_bound:
        form.is_valid()  # cleaned_data then holds the valid filters only
        filters = form.cleaned_data
    calls = selectors.call_log_list(
        environment=filters.get("environment"),
        status_class=filters.get("status_class") or "",
        path=filters.get("path") or "",
        day=filters.get("date"),
    )
    page = Paginator(calls, CALL_LOG_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "query": query.urlencode()}
    return _page_or_fragment(request, "gateway/call_log.html", "results", context)


def _page_or_fragment(
    request: HttpRequest, template: str, fragment: str, context: dict[str, Any]
) -> HttpResponse:
    """The whole page, or only its `fragment` (a template partial) when htmx asks for it."""
    if request.htmx:  # type: ignore[attr-defined]
        template += f"#{fragment}"
    return render(request, template, context)
