"""A token never stands for more than its owner (issue 30 item 2): a scope none of whose
permissions the person's roles hold is refused when the token is made, by the service that the
command (break-glass included), the profile page and any caller share."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from staff.api_tokens import api_token_create, default_scopes, scopes_within_role
from staff.errors import ServiceError
from staff.models import ApiToken, StaffUser
from staff.roles import ROLES, TOKEN_SCOPES
from tests.identity import stepped_up

pytestmark = pytest.mark.django_db

# What each role's own permissions allow, as the product's roles are declared today.
EXPECTED = {
    "finance_maker": {"read", "prepare"},
    "finance_approver": {"read", "prepare", "approve"},
    "auditor": {"read"},
}


def _holds(user: StaffUser, scope: str) -> bool:
    return any(user.has_perm(permission) for permission in TOKEN_SCOPES[scope])


@pytest.mark.parametrize("role", [role.key for role in ROLES])
def test_each_role_gets_only_the_scopes_its_permissions_reach(
    demo_staff: dict[str, StaffUser], role: str
) -> None:
    user = demo_staff[role]
    assert set(scopes_within_role(user)) == {s for s in TOKEN_SCOPES if _holds(user, s)}
    if role in EXPECTED:
        assert set(scopes_within_role(user)) == EXPECTED[role]
    for scope in TOKEN_SCOPES:
        if _holds(user, scope):
            made = api_token_create(user=user, name=scope, scopes=[scope], days=7)
            assert made.token.scopes == [scope]
            continue
        with pytest.raises(ServiceError) as refused:
            api_token_create(user=stepped_up(user), name=scope, scopes=[scope], days=7, by=user)
        assert refused.value.code == "scope_beyond_role"
        assert refused.value.errors[0].field == "scopes"
    made_names = set(ApiToken.objects.filter(user=user).values_list("name", flat=True))
    assert made_names == set(scopes_within_role(user))


def test_the_break_glass_command_refuses_approve_and_admin_to_the_auditor(
    demo_staff: dict[str, StaffUser],
) -> None:
    auditor = demo_staff["auditor"]
    with pytest.raises(CommandError) as refused:
        call_command(
            "api_token",
            "create",
            "--email",
            auditor.email,
            "--scopes",
            "read,approve,admin",
            "--days",
            "30",
            "--break-glass",
        )
    assert "approve, admin" in str(refused.value)
    assert "never exceeds its owner" in str(refused.value)
    assert not ApiToken.objects.filter(user=auditor).exists()


def test_the_commands_default_scopes_are_narrowed_to_the_role(
    demo_staff: dict[str, StaffUser], capsys: pytest.CaptureFixture[str]
) -> None:
    auditor = demo_staff["auditor"]
    assert default_scopes(auditor) == ["read"]
    call_command("api_token", "create", "--email", auditor.email, "--json")
    assert ApiToken.objects.get(user=auditor).scopes == ["read"]
