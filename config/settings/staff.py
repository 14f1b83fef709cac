"""Settings of staff: sign-in, lockout, sessions, the second factor and passkeys, step-up, API
tokens, admin changes (maker-checker), and the cookies and Content-Security-Policy that protect a
signed-in person; owned by staff/."""

import environ
from django.utils.csp import CSP

env = environ.Env()

# --- Auth and staff -----------------------------------------------------------------------------
AUTH_USER_MODEL = "staff.StaffUser"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "staff:login"
LOGIN_REDIRECT_URL = "console:dashboard"
LOGOUT_REDIRECT_URL = "staff:login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Client address (staff.client_address): X-Forwarded-For is believed only from these proxies
# (comma-separated addresses or CIDR networks; default none, so REMOTE_ADDR is the client).
PAYOPS_TRUSTED_PROXIES = env.list("PAYOPS_TRUSTED_PROXIES", default=[])

# Sign-in lockout (staff.lockout): per account, back-off doubling from BACKOFF to BACKOFF_MAX
# seconds once FAILURE_LIMIT failures are remembered; failures are forgotten after MEMORY hours.
PAYOPS_LOGIN_FAILURE_LIMIT = env.int("PAYOPS_LOGIN_FAILURE_LIMIT", default=5)
PAYOPS_LOGIN_BACKOFF_SECONDS = env.int("PAYOPS_LOGIN_BACKOFF_SECONDS", default=30)
PAYOPS_LOGIN_BACKOFF_MAX_SECONDS = env.int("PAYOPS_LOGIN_BACKOFF_MAX_SECONDS", default=15 * 60)
PAYOPS_LOGIN_FAILURE_MEMORY_HOURS = env.float("PAYOPS_LOGIN_FAILURE_MEMORY_HOURS", default=24)
# The owner is emailed once when their account reaches this many failures.
PAYOPS_LOGIN_NOTICE_AFTER = env.int("PAYOPS_LOGIN_NOTICE_AFTER", default=5)

# django-axes stores the attempts; staff.lockout decides the lock from them.
AXES_HANDLER = "staff.lockout.BackoffHandler"
AXES_LOCKOUT_CALLABLE = "staff.lockout.lockout_response"
AXES_CLIENT_IP_CALLABLE = "staff.client_address.client_ip"
AXES_USERNAME_CALLABLE = "staff.lockout.login_username"
AXES_FAILURE_LIMIT = "staff.lockout.axes_failure_limit"
AXES_COOLOFF_TIME = "staff.lockout.cool_off"  # how long a failure is remembered
AXES_LOCKOUT_PARAMETERS = ["username"]
# axes.W006 warns that a lock without the address can be dodged by rotating user agents: not here,
# staff.lockout sums the account's failures over every address and user agent (tests prove it).
SILENCED_SYSTEM_CHECKS = ["axes.W006"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # refused attempts do not lengthen the wait
AXES_USERNAME_FORM_FIELD = "username"
AXES_RESET_ON_SUCCESS = True

# Step-up (staff.step_up): minutes a verified second factor stays fresh for sensitive actions.
PAYOPS_STEP_UP_MINUTES = env.int("PAYOPS_STEP_UP_MINUTES", default=5)
# Personal API tokens (staff.api_tokens): the longest lifetime of a read/prepare token, in days;
# a token that can approve, release or administer lasts 90 days at most whatever this says.
PAYOPS_API_TOKEN_MAX_DAYS = env.int("PAYOPS_API_TOKEN_MAX_DAYS", default=365)

# Sessions (staff.sessions): signed out after IDLE minutes without activity (PRIVILEGED for
# finance approvers, admins and superusers) and MAX_HOURS after signing in, in every environment.
PAYOPS_SESSION_IDLE_MINUTES = env.int("PAYOPS_SESSION_IDLE_MINUTES", default=60)
PAYOPS_SESSION_IDLE_MINUTES_PRIVILEGED = env.int(
    "PAYOPS_SESSION_IDLE_MINUTES_PRIVILEGED", default=15
)
PAYOPS_SESSION_MAX_HOURS = env.float("PAYOPS_SESSION_MAX_HOURS", default=8)
SESSION_COOKIE_AGE = int(PAYOPS_SESSION_MAX_HOURS * 3600)

# The second factor (docs/identity.md): roles that must enrol one at first sign-in (superusers
# always do); others may enrol from their profile.
PAYOPS_SECOND_FACTOR_ROLES: list[str] = env.list(
    "PAYOPS_SECOND_FACTOR_ROLES", default=["finance_approver", "compliance", "admin", "auditor"]
)
# The Django admin never shows an authenticator's secret or QR code (django-otp's own admin).
OTP_ADMIN_HIDE_SENSITIVE_DATA = True
# TOTP: the issuer an authenticator app shows next to the account.
OTP_TOTP_ISSUER = env("PAYOPS_TOTP_ISSUER", default="PayOps")
# Passkeys (django-otp-webauthn): the relying party id is this site's host name (never an IP
# address); credentials are bound to it, so set it once per deployment. Locally: open
# http://localhost:8000 (a secure context) to use passkeys. Production derives both from its host.
OTP_WEBAUTHN_RP_ID = env("PAYOPS_WEBAUTHN_RP_ID", default="localhost")
OTP_WEBAUTHN_RP_NAME = env("PAYOPS_WEBAUTHN_RP_NAME", default="PayOps")
# The origins (scheme://host[:port]) whose pages may use passkeys.
OTP_WEBAUTHN_ALLOWED_ORIGINS: list[str] = env.list(
    "PAYOPS_WEBAUTHN_ALLOWED_ORIGINS", default=["http://localhost:8000"]
)
# A passkey is a second factor after the password here, never a password-less sign-in.
OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN = False

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Django 6 Content-Security-Policy: only our own origin; HTMX and styles are served from static/.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
    "base-uri": [CSP.SELF],
}

# Maker-checker on admin changes (staff.changes, docs/admin-changes.md): credentials, webhooks,
# the approval policy, roles and second-factor resets wait for a second admin; where only one
# admin exists, they apply after this many hours (every admin is emailed).
PAYOPS_ADMIN_MAKER_CHECKER = env.bool("PAYOPS_ADMIN_MAKER_CHECKER", default=True)
PAYOPS_ADMIN_CHANGE_WAIT_HOURS = env.int("PAYOPS_ADMIN_CHANGE_WAIT_HOURS", default=24)
