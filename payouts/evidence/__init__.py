"""A payout's evidence pack: one ZIP that answers "why was this paid" (docs/payouts.md).

`facts.py` gathers what happened (pure reads), `pdf.py` lays it out for a person, `services.py`
checks who asks, writes the ZIP to a temporary file and audits the download.
"""
