"""The audit trail as a page, an export and an API (staff owns the entries and their chain).

It lives in the console because it needs the console's list helpers and its CSV writer, and it
reads only staff's model: staff < console (ADR 0016) holds without a new app."""
