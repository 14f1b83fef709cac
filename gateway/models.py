"""Models of gateway."""
