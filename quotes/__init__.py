"""Quotations: FX rates, fees and recipient amounts, locked for a limited time."""
