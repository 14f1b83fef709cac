"""Reconciliation runs against the upstream, and the exceptions queue of what differs."""
