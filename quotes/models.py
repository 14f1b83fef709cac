"""Models of quotes."""
