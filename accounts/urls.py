"""URLs of the account pages (virtual accounts and recipients)."""

from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.virtual_account_list, name="list"),
    path("virtual-accounts/new/", views.virtual_account_create, name="virtual_account_create"),
    path("virtual-accounts/<int:pk>/", views.virtual_account_detail, name="virtual_account_detail"),
    path(
        "virtual-accounts/<int:pk>/refresh/",
        views.virtual_account_refresh,
        name="virtual_account_refresh",
    ),
    path("recipients/", views.recipient_list, name="recipient_list"),
    path("recipients/new/", views.recipient_create, name="recipient_create"),
    path("recipients/approvals/", views.recipient_approvals, name="recipient_approvals"),
    path("recipients/<int:pk>/", views.recipient_detail, name="recipient_detail"),
    path("recipients/<int:pk>/edit/", views.recipient_edit, name="recipient_edit"),
    path("recipients/<int:pk>/approve/", views.recipient_approve, name="recipient_approve"),
    path("recipients/<int:pk>/reject/", views.recipient_reject, name="recipient_reject"),
    path("recipients/<int:pk>/archive/", views.recipient_archive, name="recipient_archive"),
]
