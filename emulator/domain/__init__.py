"""The emulator's domain half: users, accounts, recipients, OTPs, payouts (services and states)."""
