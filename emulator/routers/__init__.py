"""ninja router factories of the emulator (one Router per environment; see emulator.api)."""
