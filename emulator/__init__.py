"""A stand-in for the upstream payments API: its own ASGI process, URLs and tables."""
