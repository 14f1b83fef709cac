"""Settings of the webhook benchmark's server: local settings plus a bare 200 view to compare."""

from config.settings.local import *  # noqa: F403

ROOT_URLCONF = "_webhooks_urls"
DEBUG = False
