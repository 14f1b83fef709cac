"""App configuration for sandbox: dev-only tools that drive the emulator over HTTP."""

from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "sandbox"
    verbose_name = "Sandbox tools (development only)"

    def ready(self) -> None:
        from sandbox.bootstrap import ensure_emulator_sandbox
        from staff.bootstrap import register_step

        register_step("sandbox.emulator_sandbox", ensure_emulator_sandbox)
