"""App configuration for emulator."""

from django.apps import AppConfig


class EmulatorConfig(AppConfig):
    name = "emulator"
    verbose_name = "Upstream emulator"
