"""Payout pages."""

from django.urls import path

from payouts import approval_views, otp_views, views

app_name = "payouts"
urlpatterns = [
    path("", views.payout_list, name="list"),
    path("export.csv", views.payout_export, name="export"),
    path("new/", views.payout_new, name="new"),
    path("<int:pk>/", views.payout_detail, name="detail"),
    path("<int:pk>/edit/", views.payout_edit, name="edit"),
    path("<int:pk>/delete/", views.payout_delete, name="delete"),
    path("<int:pk>/preview/", views.payout_preview_view, name="preview"),
    path("<int:pk>/documents/", views.document_add_view, name="document_add"),
    path(
        "<int:pk>/documents/<int:document_pk>/remove/",
        views.document_remove_view,
        name="document_remove",
    ),
    path("<int:pk>/submit/", views.payout_submit_view, name="submit"),
    # Issue 14: maker-checker, OTP and the live region of the payout page.
    path("<int:pk>/live/", approval_views.payout_live, name="live"),
    path("<int:pk>/approve/", approval_views.approve_view, name="approve"),
    path("<int:pk>/reject/", approval_views.reject_view, name="reject"),
    path("<int:pk>/otp/", otp_views.otp_step_view, name="otp_step"),
    path("<int:pk>/otp/send/", otp_views.otp_send_view, name="otp_send"),
    path("<int:pk>/otp/confirm/", otp_views.otp_confirm_view, name="otp_confirm"),
    path("<int:pk>/cancel/", approval_views.cancel_view, name="cancel"),
    path("<int:pk>/requote/", approval_views.requote_view, name="requote"),
    path("<int:pk>/resend/", approval_views.resend_view, name="resend"),
    path("approvals/", approval_views.approval_inbox_view, name="approvals"),
    path("approvals/approve/", approval_views.bulk_approve_view, name="bulk_approve"),
    path("approval-policy/", approval_views.approval_policy_view, name="approval_policy"),
    path(
        "notifications/read/",
        approval_views.notifications_read_view,
        name="notifications_read",
    ),
]
