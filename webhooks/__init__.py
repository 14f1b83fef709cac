"""Webhook registration, signed receiver, event store, processing and the live staff stream."""
