"""Live updates across processes on the embedded default: the outbox channel layer (ADR 0012)."""
