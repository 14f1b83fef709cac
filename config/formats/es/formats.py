"""Spanish number separators: 1.234,56 (the rest of the formats are Django's Spanish ones)."""

DECIMAL_SEPARATOR = ","
THOUSAND_SEPARATOR = "."
