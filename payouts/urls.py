"""Payout pages, by the payout's life: the list and one payout; drafts; approval; release."""

from django.urls import path

from payouts import views
from payouts.approval import views as approval
from payouts.drafts import views as drafts
from payouts.evidence import views as evidence
from payouts.release import views as release

app_name = "payouts"
urlpatterns = [
    path("", views.payout_list, name="list"),
    path("export.csv", views.payout_export, name="export"),
    path("<int:pk>/", views.payout_detail, name="detail"),
    path("<int:pk>/live/", views.payout_live, name="live"),
    path("new/", drafts.payout_new, name="new"),
    path("<int:pk>/edit/", drafts.payout_edit, name="edit"),
    path("<int:pk>/delete/", drafts.payout_delete, name="delete"),
    path("<int:pk>/preview/", drafts.payout_preview_view, name="preview"),
    path("<int:pk>/documents/", drafts.document_add_view, name="document_add"),
    path(
        "<int:pk>/documents/<int:document_pk>/",
        views.document_open_view,
        name="document_open",
    ),
    path(
        "<int:pk>/documents/<int:document_pk>/remove/",
        drafts.document_remove_view,
        name="document_remove",
    ),
    path("<int:pk>/submit/", drafts.send_for_approval_view, name="submit"),
    path("<int:pk>/approve/", approval.approve_view, name="approve"),
    path("<int:pk>/reject/", approval.reject_view, name="reject"),
    path("<int:pk>/cancel/", approval.cancel_view, name="cancel"),
    path("<int:pk>/withdraw-approval/", approval.withdraw_view, name="withdraw_approval"),
    path("<int:pk>/requote/", approval.requote_view, name="requote"),
    path("approvals/", approval.approval_inbox_view, name="approvals"),
    path("approvals/approve/", approval.bulk_approve_view, name="bulk_approve"),
    path("approval-policy/", approval.approval_policy_view, name="approval_policy"),
    path("notifications/read/", approval.notifications_read_view, name="notifications_read"),
    path("<int:pk>/otp/", release.otp_step_view, name="otp_step"),
    path("<int:pk>/otp/send/", release.otp_send_view, name="otp_send"),
    path("<int:pk>/otp/confirm/", release.otp_confirm_view, name="otp_confirm"),
    path("<int:pk>/resend/", release.resend_view, name="resend"),
    path("<int:pk>/evidence/", evidence.evidence_download_view, name="evidence"),
]
