"""Credential, base URL and verification email changes as admin changes (staff.changes).

An admin's edit that touches what step-up guards (a credential, the base URL, the verification
email) becomes a proposal another admin approves; the other fields apply at once (no second
admin is needed to raise a rate limit). New credentials are encrypted (staff.crypto) in the
proposal's payload and shown only as "replaced"; applying calls `environment_update`.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy

from gateway.models import Environment
from gateway.services.environments import (
    CREDENTIAL_FIELDS,
    STEP_UP_FIELDS,
    _public_fields,
    environment_update,
)
from staff import crypto
from staff.changes import change_propose, register_change_kind
from staff.models import ChangeProposal

if TYPE_CHECKING:
    from staff.models import StaffUser

KIND = "environment.credentials"


def _json_value(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def environment_version(environment: Environment) -> str:
    """Its public fields and credentials, keyed-hashed: any edit since gives another; a key
    rotation (the same credentials under another key) does not."""
    state = {
        **_public_fields(environment),
        **{name: _credential_state(environment, name) for name in CREDENTIAL_FIELDS},
    }
    return crypto.secrets_version("environment", json.dumps(state, sort_keys=True, default=str))


def _credential_state(environment: Environment, name: str) -> str:
    """A credential's plaintext, or, when no configured key reads it any more (its key was
    retired: docs/gateway.md, "Key rotation"), its stored ciphertext: an admin must
    still be able to propose the credentials again, and re-storing it changes the version."""
    try:
        return str(getattr(environment, name))
    except crypto.SecretDecryptionError:
        return "unreadable:" + getattr(environment, f"{name}_encrypted")


def _version(proposal: ChangeProposal) -> str:
    environment = Environment.objects.filter(pk=proposal.payload["environment"]).first()
    return environment_version(environment) if environment else "gone"


def environment_change(
    *,
    environment: Environment,
    by: StaffUser,
    client_id: str | None = None,
    password: str | None = None,
    api_key: str | None = None,
    **fields: Any,
) -> ChangeProposal | None:
    """An admin's edit: the guarded part is proposed (returned), the rest applies now (None
    when nothing guarded changed)."""
    # The stored row, not `environment` (a ModelForm has already copied its values onto it).
    environment = Environment.objects.get(pk=environment.pk)
    before = _public_fields(environment)
    guarded = {k: fields.pop(k) for k in STEP_UP_FIELDS & set(fields) if fields[k] != before[k]}
    for k in STEP_UP_FIELDS & set(fields):
        fields.pop(k)
    credentials = {
        name: value
        for name, value in zip(CREDENTIAL_FIELDS, (client_id, password, api_key), strict=True)
        if value
    }
    changed_plain = {k: v for k, v in fields.items() if _json_value(v) != before[k]}
    if changed_plain:
        environment = environment_update(environment=environment, by=by, **changed_plain)
    if not guarded and not credentials:
        return None
    after = {k: _json_value(v) for k, v in guarded.items()}
    after.update({name: "replaced" for name in credentials})
    return change_propose(
        kind=KIND,
        by=by,
        target=environment,
        target_label=environment.name,
        # The record, in English; its fields in words, not their names in code.
        summary=f"Change {', '.join(k.replace('_', ' ') for k in sorted(after))} of the "
        f"environment {environment.name}",
        before={
            **{k: before[k] for k in guarded},
            **{name: "current" for name in credentials},
        },
        after=after,
        payload={
            "environment": environment.pk,
            "fields": {k: _json_value(v) for k, v in guarded.items()},
            # Encrypted here; decrypted only to apply.
            "credentials": {name: crypto.encrypt(value) for name, value in credentials.items()},
        },
    )


def _apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    environment = Environment.objects.get(pk=proposal.payload["environment"])
    credentials = {
        name: crypto.decrypt(value) for name, value in proposal.payload["credentials"].items()
    }
    environment_update(environment=environment, by=by, **proposal.payload["fields"], **credentials)


def register_environment_change_kinds() -> None:
    register_change_kind(
        KIND,
        apply=_apply,
        version=_version,
        label=gettext_lazy("Environment credentials"),
        secret_keys=("credentials",),
    )
