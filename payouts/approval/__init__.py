"""A payout's second stage: the approval policy, the checkers' decisions, the inbox and notices."""
