"""App configuration for sandbox: dev-only tools that drive the emulator over HTTP."""

from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "sandbox"
    verbose_name = "Sandbox tools (development only)"

    def ready(self) -> None:
        from console.bootstrap import register_step
        from payouts.release.code_hints import register_code_hint
        from sandbox.bootstrap import ensure_emulator_sandbox
        from sandbox.otp_views import emulator_mailbox_hint

        register_step("sandbox.emulator_sandbox", ensure_emulator_sandbox)
        # The release step offers the newest code from the emulator's mailbox (sandbox only).
        register_code_hint("sandbox.emulator_mailbox", emulator_mailbox_hint)
