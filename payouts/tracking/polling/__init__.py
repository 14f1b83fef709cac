"""
Status polling, the safety net behind webhooks, sized to the upstream's weekly budget: a pure
plan (`plan`, `budget`, `outcome`) and the pass that runs it (`run`). Cost model: docs/payouts.md.
"""
