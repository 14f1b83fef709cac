"""Models of webhooks."""
