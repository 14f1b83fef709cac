"""App configuration for console: the back-office shell every other app plugs into."""

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        # Importing health registers the console's own checks.
        from django.core.signals import request_finished
        from django_q.signals import post_spawn, pre_enqueue, pre_execute

        from console import health  # noqa: F401
        from console.bootstrap import register_step
        from console.metrics import queue_metrics, register_metrics
        from console.middleware import carry_into_task, request_id_clear, take_from_task
        from console.schedules import register_console_schedules, register_schedule
        from console.tasks import heartbeat_on_worker_start
        from staff.bootstrap import step_demo_staff, step_roles
        from staff.tasks import admin_changes_apply_due

        # Staff depends on no other app, so the console registers staff's steps, first.
        register_step("staff.roles", step_roles)
        register_step("staff.demo_staff", step_demo_staff)
        register_console_schedules()
        register_metrics("console.queue", queue_metrics)
        # Staff's admin changes waiting out the single-admin period (staff.changes), likewise.
        register_schedule("staff.admin_changes_apply_due", admin_changes_apply_due, minutes=5)
        # A task logs (and calls upstream) under the id of the request that queued it.
        pre_enqueue.connect(carry_into_task, dispatch_uid="console.request_id_carry")
        pre_execute.connect(take_from_task, dispatch_uid="console.request_id_take")
        request_finished.connect(request_id_clear, dispatch_uid="console.request_id_clear")
        # Each qcluster worker process beats as it starts (see console.tasks).
        post_spawn.connect(heartbeat_on_worker_start, dispatch_uid="console.heartbeat_on_start")
        # Optional tracing: instrumented here, before any request or task runs (and, off,
        # nothing of OpenTelemetry is imported).
        from django.conf import settings

        if settings.PAYOPS_OTEL_ENABLED:
            from console.tracing import tracing_start

            tracing_start()
