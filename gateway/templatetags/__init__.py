"""Template tags of the gateway pages."""
