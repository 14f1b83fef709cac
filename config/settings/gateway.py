"""Settings of the upstream gateway (timeouts, retries, limits, call log); owned by gateway/."""

import environ

env = environ.Env()

GATEWAY_API_VERSION = env("GATEWAY_API_VERSION", default="2026-04-14")
