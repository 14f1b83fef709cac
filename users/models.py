"""Models of users."""
