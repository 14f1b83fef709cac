"""Statements, balance history, receipts and the fees and FX report."""
