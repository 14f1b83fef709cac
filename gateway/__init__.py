"""The one way to talk to the upstream: environments, tokens, rate budget, errors, call log."""
