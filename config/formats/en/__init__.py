"""English formats of the project (see config/formats)."""
