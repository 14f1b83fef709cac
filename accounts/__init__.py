"""Virtual accounts and payout recipients behind each payout."""
