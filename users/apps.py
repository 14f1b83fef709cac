"""App configuration for users: its mirror for webhooks' catch-up."""

from django.apps import AppConfig


class UsersConfig(AppConfig):
    name = "users"
    verbose_name = "End users"

    def ready(self) -> None:
        from users.catch_up import end_users_catch_up
        from webhooks.mirrors import Mirror, register_mirror

        # After a webhook registration, users still waiting for a KYC decision are read back.
        register_mirror(Mirror("user", "end users", catch_up=end_users_catch_up, order=30))
