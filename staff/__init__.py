"""Staff logins, roles, audit trail and the shared UI shell (navigation, dashboard, errors)."""
