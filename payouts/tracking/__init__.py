"""A payout's last stage: following it upstream by events and polling, to its final state."""
