"""Gateway selectors: the environments (`environments`), the week's upstream budget (`quota`) and
the call log (`call_log`). Every name is importable from `gateway.selectors` itself."""

from gateway.selectors.call_log import STATUS_CLASS_FILTERS, call_log_list
from gateway.selectors.environments import (
    EnvironmentRow,
    UpstreamLimits,
    environment_active_list,
    environment_choices,
    environment_current,
    environment_default,
    environment_in_use_list,
    environment_list,
    environment_rows,
)
from gateway.selectors.quota import (
    BACKGROUND_PRIORITY,
    PACE_WINDOW,
    Forecast,
    OperationUsage,
    QuotaGauge,
    budget_forecast,
    budget_metrics,
    calls_since,
    iso_week_bounds,
    quota_gauges,
)

__all__ = [
    "BACKGROUND_PRIORITY",
    "PACE_WINDOW",
    "STATUS_CLASS_FILTERS",
    "EnvironmentRow",
    "Forecast",
    "OperationUsage",
    "QuotaGauge",
    "UpstreamLimits",
    "budget_forecast",
    "budget_metrics",
    "call_log_list",
    "calls_since",
    "environment_active_list",
    "environment_choices",
    "environment_current",
    "environment_default",
    "environment_in_use_list",
    "environment_list",
    "environment_rows",
    "iso_week_bounds",
    "quota_gauges",
]
