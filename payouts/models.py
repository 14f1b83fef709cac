"""Models of payouts."""
