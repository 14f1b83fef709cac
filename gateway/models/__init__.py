"""Gateway models: upstream environments (with encrypted credentials) and the upstream call log."""

from gateway.models.environment import Environment, EnvironmentKind, StaffEnvironmentChoice

__all__ = ["Environment", "EnvironmentKind", "StaffEnvironmentChoice"]
