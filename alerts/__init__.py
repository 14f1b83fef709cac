"""Alerts that reach people: rules over the back office's conditions, delivered and audited."""
