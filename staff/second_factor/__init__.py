"""The second factor of a staff sign-in: TOTP apps, passkeys and recovery codes (docs/identity.md).

By concept: `models.py` (recovery codes, admin resets), `devices.py` (who has which device, who
must enrol), `totp.py`, `recovery.py`, `verification.py` (a code or passkey passed: the session
is verified), `gate.py` (the middleware holding an unverified session on these pages),
`reset.py` (an admin reset, confirmed by a second admin), `demo.py` (the demo staff's codes),
`views.py`, `passkeys.py` (django-otp-webauthn's views, wired to our audit and session).
"""
