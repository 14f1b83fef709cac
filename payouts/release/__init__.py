"""A payout's third stage: the approver's code, and the exactly-once initiation call upstream."""
