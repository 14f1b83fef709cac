"""URLs of the end-user pages."""

from django.urls import path

from users import views

app_name = "users"

urlpatterns = [
    path("", views.end_user_list, name="list"),
    path("new/", views.end_user_create, name="create"),
    path("kyc/", views.kyc_queue, name="kyc_queue"),
    path("<int:pk>/", views.end_user_detail, name="detail"),
    path("<int:pk>/edit/", views.end_user_edit, name="edit"),
    path("<int:pk>/refresh/", views.end_user_refresh, name="refresh"),
    path("<int:pk>/notes/", views.kyc_note, name="kyc_note"),
    path("<int:pk>/reviewed/", views.kyc_reviewed, name="kyc_reviewed"),
]
