"""A stand-in for the upstream payments API, served as its own ASGI process with its own URLs and tables."""
