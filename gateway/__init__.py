"""The one disciplined way to talk to the upstream: environments, credentials, tokens, rate budget, errors, call log."""
