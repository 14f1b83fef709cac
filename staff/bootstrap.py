"""Staff's bootstrap steps: sync the roles, seed one demo login per role where allowed.

The console runs them first (console.bootstrap); they are idempotent like every step.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction

from staff.actions import record_action  # no live page for these records: announce=False
from staff.models import StaffUser
from staff.roles import ADMIN, Role, demo_logins_declared, roles_sync
from staff.second_factor.demo import demo_totp_enrol

# One shared password for every demo login; demo staff exist only where
# settings.PAYOPS_SEED_DEMO_STAFF is true (local and test, never production).
DEMO_PASSWORD = "payops-demo"


class DemoSeedingRefused(RuntimeError):
    """Demo staff were requested where settings.PAYOPS_SEED_DEMO_STAFF is false."""


def demo_logins() -> list[tuple[Role, str]]:
    """(role, email) of each demo login, for commands that print them; empty where not seeded."""
    if not settings.PAYOPS_SEED_DEMO_STAFF:
        return []
    return demo_logins_declared()


def seed_demo_staff(*, second_admin: bool = False) -> list[StaffUser]:
    """Create (or repair) one demo login per role (and, with `second_admin`, the second demo
    admin the embedded default offers); the password is set only when created.

    Returns one user per role (the role's own demo login), in role order."""
    if not settings.PAYOPS_SEED_DEMO_STAFF:
        raise DemoSeedingRefused(
            "Refusing to seed demo staff: settings.PAYOPS_SEED_DEMO_STAFF is false "
            f"(environment {settings.PAYOPS_ENVIRONMENT!r})."
        )
    users = []
    with transaction.atomic():
        for role, email in demo_logins_declared():
            if email != role.demo_email and not second_admin:
                continue
            user = StaffUser.objects.filter(email=email).first()
            created = user is None
            if user is None:
                second = " (second)" if email != role.demo_email else ""
                user = StaffUser.objects.create_user(
                    email, DEMO_PASSWORD, full_name=f"Demo {role.display_name.lower()}{second}"
                )
            is_admin = role is ADMIN
            if not user.is_active or user.is_staff != is_admin or user.is_superuser != is_admin:
                user.is_active = True
                user.is_staff = user.is_superuser = is_admin
                user.save(update_fields=["is_active", "is_staff", "is_superuser"])
            user.groups.add(Group.objects.get(name=role.key))
            # Demo logins of every second-factor role come enrolled: `make run` needs no detour.
            demo_totp_enrol(user)
            if created:
                record_action(
                    actor=None,
                    action="staff.demo_user_created",
                    target=user,
                    details={"role": role.key},
                    announce=False,
                )
            if email == role.demo_email:
                users.append(user)
    return users


def step_roles() -> str:
    groups = roles_sync()
    return "roles synced: " + ", ".join(group.name for group in groups)


def step_demo_staff() -> str:
    if not settings.PAYOPS_SEED_DEMO_STAFF:
        return "demo staff not seeded: PAYOPS_SEED_DEMO_STAFF is off in these settings"
    # Two admins, so an admin change one proposes can be approved by the other (staff.changes).
    seed_demo_staff(second_admin=True)
    logins = ", ".join(email for _, email in demo_logins_declared())
    return f"demo staff ready ({logins}), password {DEMO_PASSWORD!r} (set when first created)"
