"""Gateway models: upstream environments (with encrypted credentials) and the upstream call log."""

from gateway.models.call_log import UpstreamCall
from gateway.models.environment import Environment, EnvironmentKind, StaffEnvironmentChoice
from gateway.models.state import LimiterRow

__all__ = [
    "Environment",
    "EnvironmentKind",
    "LimiterRow",
    "StaffEnvironmentChoice",
    "UpstreamCall",
]
