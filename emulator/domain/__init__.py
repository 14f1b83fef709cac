"""The emulator's domain: quotations, pricing and corridors, users, accounts, recipients, OTPs,
payouts and webhooks (services, states and the one formats module)."""
