"""The emulator on its own (a stand-in upstream on a shared host): base settings plus the emulator.

    DJANGO_SETTINGS_MODULE=config.settings.emulator uvicorn emulator.asgi:application

No sandbox tools and no demo staff; the control token and a secret key are required, because this
emulator may be reachable by others.
"""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import BASE_DIR, DATABASES, INSTALLED_APPS, MIDDLEWARE, env
from .emulator_guest import *  # noqa: F403
from .emulator_guest import install_emulator

PAYOPS_ENVIRONMENT = "emulator"
DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is not set; the emulator settings require it.")
INSTALLED_APPS, MIDDLEWARE, DATABASES, DATABASE_ROUTERS = install_emulator(
    INSTALLED_APPS, MIDDLEWARE, DATABASES, BASE_DIR
)
