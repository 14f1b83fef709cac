"""Settings of the upstream emulator (its limits, clock, delays, faults); owned by emulator/."""

import environ

env = environ.Env()

# Token guarding /_control/; required when the emulator runs under production settings.
EMULATOR_CONTROL_TOKEN = env("EMULATOR_CONTROL_TOKEN", default="")
# Where the emulator listens when run as its own process (make emulator / make run).
EMULATOR_URL = env("EMULATOR_URL", default="http://127.0.0.1:8001")
