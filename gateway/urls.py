"""Gateway pages: environments and the call log (placeholder)."""

app_name = "gateway"
urlpatterns: list[object] = []
