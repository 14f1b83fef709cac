"""Reads for maker-checker screens: the approval inbox, a payout's approvals, policy impact."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.core.paginator import Page, Paginator
from django.db.models import Exists, OuterRef, Prefetch, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, ngettext

from accounts.models import Recipient
from console.templatetags.ui import when
from gateway.models import Environment
from payouts.approval.policy import APPROVING_ROLES, NOT_COUNTED, approver_roles, payout_facts
from payouts.approval.rules import (
    ANY_APPROVER,
    LIMIT_MAKER,
    ApprovalFacts,
    Chain,
    ChainStep,
    LimitBreach,
    LimitSpec,
    RuleSpec,
    approval_chain,
    approval_decide,
    chain_total,
    limit_breach,
)
from payouts.models import Approval, Payout, PayoutStatus, chain_from_json
from payouts.selectors import payout_filter
from staff.models import StaffUser
from staff.roles import PAYOUT_APPROVE, ROLES_BY_KEY

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


S = PayoutStatus
SCOPE_MINE = "mine"
SCOPE_ANYONE = "anyone"
INBOX_PAGE_SIZE = 50


def _current_approvals() -> Prefetch[Any]:
    return Prefetch(
        "approvals",
        queryset=Approval.objects.filter(voided_at__isnull=True).select_related("approver"),
        to_attr="approvals_valid",
    )


# The inbox's orders (`?sort=`): oldest submission first by default, as approvers work.
INBOX_SORTS: dict[str, tuple[StrOrPromise, tuple[str, ...]]] = {
    "submitted": (gettext_lazy("Oldest first"), ("submitted_at", "pk")),
    "-submitted": (gettext_lazy("Newest first"), ("-submitted_at", "-pk")),
    "-amount": (gettext_lazy("Largest amount first"), ("-amount", "-pk")),
    "amount": (gettext_lazy("Smallest amount first"), ("amount", "pk")),
}
INBOX_SORT_DEFAULT = "submitted"


def chain_display(chain: Sequence[ChainStep]) -> str:
    """An approval chain as people read it, in their language: "1 approver" or "1 holder of the
    Finance approver role, then 1 holder of the Admin role" (`chain_label` is the stored form)."""
    parts = []
    for step in chain:
        role = ROLES_BY_KEY.get(step.role)
        if role is None:
            text = ngettext("%(count)d approver", "%(count)d approvers", step.count)
            parts.append(text % {"count": step.count})
        else:
            text = ngettext(
                "%(count)d holder of the %(role)s role",
                "%(count)d holders of the %(role)s role",
                step.count,
            )
            parts.append(text % {"count": step.count, "role": role.display_name})
    return gettext(", then ").join(parts)


@dataclass(frozen=True)
class InboxFilters:
    """What the inbox is narrowed by (as the payout list's filter bar) and its order."""

    q: str = ""
    maker: StaffUser | None = None
    corridor: str = ""
    amount_min: Decimal | None = None
    amount_max: Decimal | None = None
    sort: str = INBOX_SORT_DEFAULT


def _inbox_waiting(*, environment: Environment | None, filters: InboxFilters) -> QuerySet[Payout]:
    """The payouts waiting, filtered and ordered in SQL, without their related rows: what the
    count, the page and the `mine` decision start from."""
    payouts = payout_filter(
        Payout.objects.filter(status=S.PENDING_APPROVAL),
        q=filters.q,
        maker=filters.maker,
        corridor=filters.corridor,
        amount_min=filters.amount_min,
        amount_max=filters.amount_max,
    )
    _, order = INBOX_SORTS.get(filters.sort, INBOX_SORTS[INBOX_SORT_DEFAULT])
    payouts = payouts.order_by(*order)
    if environment is not None:
        payouts = payouts.filter(environment=environment)
    return payouts


def _inbox_mine(user: StaffUser, waiting: QuerySet[Payout]) -> QuerySet[Payout]:
    """Of `waiting`, the payouts this person may approve as far as SQL tells: not their own,
    not to a recipient they created, not approved (or withdrawn) by them in this round."""
    if not user.has_perm(PAYOUT_APPROVE) and not (approver_roles(user) & set(APPROVING_ROLES)):
        return waiting.none()
    # Approved in this round, or withdrew (a withdrawn approval is voided in its round).
    mine = Approval.objects.filter(
        payout=OuterRef("pk"), approver=user, round=OuterRef("approval_round")
    )
    # To a recipient this person created: an anti-join on their own recipients (a few), not a
    # join of every payout waiting to its recipient (a plan PostgreSQL mis-estimated into 200
    # bitmap scans of the status index).
    theirs = Recipient.objects.filter(pk=OuterRef("recipient_id"), created_by=user)
    return waiting.exclude(maker=user).exclude(Exists(theirs)).exclude(Exists(mine))


def _inbox_base(
    *, user: StaffUser, environment: Environment | None, scope: str, filters: InboxFilters
) -> QuerySet[Payout]:
    """The inbox's payouts for `scope`, without their related rows."""
    waiting = _inbox_waiting(environment=environment, filters=filters)
    return _inbox_mine(user, waiting) if scope == SCOPE_MINE else waiting


def _with_rows_shown(payouts: QuerySet[Payout]) -> QuerySet[Payout]:
    """What a row of the inbox shows, joined or prefetched: a constant number of queries."""
    return (
        payouts.select_related(
            "maker",
            "recipient",
            "recipient__created_by",
            "virtual_account__end_user",
            "quote",
        )
        .prefetch_related(_current_approvals(), "documents__views")
        .annotate(recipient_paid_before=_recipient_paid_before())
    )


def approval_inbox(
    *,
    user: StaffUser,
    environment: Environment | None,
    scope: str = SCOPE_MINE,
    filters: InboxFilters | None = None,
) -> QuerySet[Payout]:
    """
    Payouts waiting for approval. `mine`: the ones this person may approve now as far as SQL
    tells (not their own, not to a recipient they created, not already approved by them in this
    round; `approval_inbox_page` also keeps only the chain steps they may fill); `anyone`: all
    of them. A constant number of queries whatever the length (related rows joined or
    prefetched).
    """
    base = _inbox_base(
        user=user, environment=environment, scope=scope, filters=filters or InboxFilters()
    )
    return _with_rows_shown(base)


def _mine_ids(user: StaffUser, waiting: QuerySet[Payout]) -> list[int]:
    """The ids, in the inbox's order, of the payouts of `waiting` (`_inbox_waiting`) whose
    current chain step this person may fill now: `_inbox_mine` in SQL (so the recipient's row is
    not read here), then the pure `approval_decide` over two narrow queries (the payouts' ids,
    makers and chains; the valid approvals of the payouts waiting), whatever the number."""
    base = _inbox_mine(user, waiting)
    # The chain as its JSON text, parsed once per distinct chain (a few policies' worth), not
    # decoded on each of thousands of rows.
    lean = list(
        base.annotate(chain_text=Cast("approval_chain", TextField())).values_list(
            "pk", "maker_id", "approvals_required", "chain_text", "approval_round"
        )
    )
    if not lean:
        return []
    given: dict[int, list[tuple[int, int, int]]] = {}
    # Over `waiting`, not `base`: a few more rows, but not the exclusions' subqueries again.
    for payout_id, approver_id, step, round_ in Approval.objects.filter(
        payout__in=waiting.values("pk"), voided_at__isnull=True
    ).values_list("payout_id", "approver_id", "step", "round"):
        given.setdefault(payout_id, []).append((approver_id, step, round_))
    roles = approver_roles(user)
    permitted = user.has_perm(PAYOUT_APPROVE)
    # The decision reads only what the key holds (whether this person made the payout or
    # approved it; the chain, the count and the approvals' steps), so payouts alike are decided
    # once: thousands waiting make a few decisions, not thousands.
    decided: dict[tuple[object, ...], bool] = {}
    chains: dict[str, Chain] = {}
    me = user.pk  # once: request.user is a lazy object, each attribute read goes through it
    mine = []
    for pk, maker_id, required, chain_text, round_now in lean:
        approvals = [(a, step) for a, step, r in given.get(pk, ()) if r == round_now]
        approver_ids = [a for a, _ in approvals]
        steps = [step for _, step in approvals]
        key = (
            maker_id == me,
            me in approver_ids,
            len(set(approver_ids)),
            tuple(steps),
            required,
            chain_text,
        )
        allowed = decided.get(key)
        if allowed is None:
            chain = chains.get(chain_text)
            if chain is None:
                chain = chains[chain_text] = chain_from_json(json.loads(chain_text))
            facts = ApprovalFacts(
                pending=True,
                maker_id=maker_id,
                recipient_creator_id=None,  # left out in SQL (`_inbox_mine`)
                approver_ids=approver_ids,
                required=required,
                chain=chain,
                approval_steps=steps,
            )
            allowed = decided[key] = approval_decide(
                facts, approver_id=me, has_permission=permitted, roles=roles
            ).allowed
        if allowed:
            mine.append(pk)
    return mine


def approval_inbox_page(
    *,
    user: StaffUser,
    environment: Environment | None,
    scope: str = SCOPE_MINE,
    filters: InboxFilters | None = None,
    number: int | str | None = 1,
    per_page: int = INBOX_PAGE_SIZE,
) -> Page:
    """
    One page of the inbox (`number` as `Paginator.get_page` takes it: out of range gives the
    last). `anyone`: a count and the page's rows, in SQL. `mine`: the ids this person may
    approve (`_mine_ids`: two narrow queries), then the page's rows. Either way the rows carry
    what the page shows, in a constant number of queries.
    """
    waiting = _inbox_waiting(environment=environment, filters=filters or InboxFilters())
    if scope != SCOPE_MINE:
        return Paginator(_with_rows_shown(waiting), per_page).get_page(number)
    ids = Paginator(_mine_ids(user, waiting), per_page).get_page(number)
    return Page(_rows_of(list(ids.object_list)), ids.number, ids.paginator)


def approval_inbox_slice(
    *,
    user: StaffUser,
    environment: Environment | None,
    scope: str = SCOPE_MINE,
    filters: InboxFilters | None = None,
    offset: int = 0,
    limit: int = INBOX_PAGE_SIZE,
) -> list[Payout]:
    """`limit` rows of the inbox from `offset` (the API's paging), as `approval_inbox_page`."""
    waiting = _inbox_waiting(environment=environment, filters=filters or InboxFilters())
    if scope != SCOPE_MINE:
        return list(_with_rows_shown(waiting)[offset : offset + limit])
    return _rows_of(_mine_ids(user, waiting)[offset : offset + limit])


def _rows_of(ids: list[int]) -> list[Payout]:
    """The payouts `ids` (one page), in that order, with what a row shows."""
    found = _with_rows_shown(Payout.objects.filter(pk__in=ids)).in_bulk()
    return [found[pk] for pk in ids if pk in found]


def approval_inbox_rows(
    *, user: StaffUser, environment: Environment | None, scope: str = SCOPE_MINE
) -> list[Payout]:
    """The whole inbox as rows (a bounded list's reader: tests, small environments); pages use
    `approval_inbox_page`."""
    if scope != SCOPE_MINE:
        return list(approval_inbox(user=user, environment=environment, scope=scope))
    waiting = _inbox_waiting(environment=environment, filters=InboxFilters())
    return _rows_of(_mine_ids(user, waiting))


def _recipient_paid_before() -> Exists:
    """Another payout to the same recipient (these exact bank details) reached the upstream."""
    return Exists(
        Payout.objects.filter(recipient=OuterRef("recipient"))
        .exclude(upstream_id="")
        .exclude(pk=OuterRef("pk"))
    )


def recipient_flag(payout: Payout) -> str:
    """What an approver should notice about the payee (dual control on bank details): the
    first payout to a new recipient, or to details changed on a date; "" when these details
    were paid before. Uses the inbox's annotation when present."""
    paid_before = getattr(payout, "recipient_paid_before", None)
    if paid_before is None:
        paid_before = (
            Payout.objects.filter(recipient_id=payout.recipient_id)
            .exclude(upstream_id="")
            .exclude(pk=payout.pk)
            .exists()
        )
    if paid_before:
        return ""
    recipient = payout.recipient
    if recipient.supersedes_id is not None:
        changed = recipient.approved_at or recipient.created_at
        return gettext("Bank details changed %(day)s") % {"day": when(changed.date())}
    return gettext("First payout to this recipient")


def valid_approvals(payout: Payout) -> list[Approval]:
    """This round's approvals, in order (uses the inbox's prefetch when present)."""
    rows = getattr(payout, "approvals_valid", None)
    if rows is None:
        rows = list(payout.approvals.filter(voided_at__isnull=True).select_related("approver"))
    return [row for row in rows if row.round == payout.approval_round]


def approvals_history(payout: Payout) -> QuerySet[Approval]:
    return payout.approvals.select_related("approver").order_by("created_at", "pk")


@dataclass(frozen=True)
class PolicyImpact:
    """What a draft policy would change for one payout waiting now (it keeps its own chain:
    stamped at submission; the preview says what the same payout would need if submitted now)."""

    payout: Payout
    chain_now: Chain
    chain_new: Chain
    breach: LimitBreach | None

    @property
    def required_now(self) -> int:
        return chain_total(self.chain_now)

    @property
    def required_under_new(self) -> int:
        return chain_total(self.chain_new)

    @property
    def chain_now_label(self) -> str:
        return chain_display(self.chain_now)

    @property
    def chain_new_label(self) -> str:
        return chain_display(self.chain_new)

    @property
    def changed(self) -> bool:
        return self.chain_now != self.chain_new or self.breach is not None


def _limit_usage(
    payouts: Sequence[Payout], limits: Sequence[LimitSpec], now: datetime
) -> list[dict[int, Decimal]]:
    """For each payout, what each limit's subject submitted in the window, the payout itself
    left out (as if it were submitted now): one query, summed here in exact decimals."""
    if not limits or not payouts:
        return [{} for _ in payouts]
    earliest = min(limit.window_start(now) for limit in limits)
    counted = list(
        Payout.objects.filter(submitted_at__gte=earliest)
        .exclude(status__in=NOT_COUNTED)
        .values_list("pk", "maker_id", "recipient_id", "currency", "amount", "submitted_at")
    )
    usage = []
    for payout in payouts:
        used: dict[int, Decimal] = {}
        for index, limit in enumerate(limits):
            start = limit.window_start(now)
            subject = payout.maker_id if limit.subject == LIMIT_MAKER else payout.recipient_id
            used[index] = sum(
                (
                    amount
                    for pk, maker, recipient, currency, amount, at in counted
                    if pk != payout.pk
                    and at is not None
                    and at >= start
                    and currency.upper() == limit.currency.upper()
                    and (maker if limit.subject == LIMIT_MAKER else recipient) == subject
                ),
                Decimal("0"),
            )
        usage.append(used)
    return usage


def policy_impact(
    *,
    rules: Sequence[RuleSpec],
    default: int,
    limits: Sequence[LimitSpec] = (),
    environment: Environment | None = None,
) -> list[PolicyImpact]:
    """
    Every payout waiting for approval now: the chain it was stamped with, the chain the draft
    policy would give it, and the limit it would now exceed (if any), all from the pure
    decisions; nothing is written. A constant number of queries whatever the number of payouts.
    """
    payouts = (
        Payout.objects.filter(status=S.PENDING_APPROVAL)
        .select_related("recipient", "maker")
        .prefetch_related("maker__groups")
        .order_by("submitted_at", "pk")
    )
    if environment is not None:
        payouts = payouts.filter(environment=environment)
    rows = list(payouts)
    now = timezone.now()
    usage = _limit_usage(rows, limits, now)
    impacts = []
    for payout, used in zip(rows, usage, strict=True):
        roles = frozenset(group.name for group in payout.maker.groups.all())
        facts = payout_facts(payout, maker_roles=roles)
        stamped = chain_from_json(payout.approval_chain) or (
            ChainStep(ANY_APPROVER, payout.approvals_required),
        )
        impacts.append(
            PolicyImpact(
                payout=payout,
                chain_now=stamped,
                chain_new=approval_chain(rules, default=default, facts=facts),
                breach=limit_breach(
                    limits, amount=payout.amount, currency=payout.currency, used=used
                ),
            )
        )
    return impacts


def waiting_count(user: StaffUser, environment: Environment | None) -> int:
    """How many payouts this person may approve now (the dashboard): ids only, no rows."""
    waiting = _inbox_waiting(environment=environment, filters=InboxFilters())
    return len(_mine_ids(user, waiting))
