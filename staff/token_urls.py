"""URLs of the staff profile page (language, personal API tokens)."""

from django.urls import path

from staff import token_views

app_name = "profile"

urlpatterns = [
    path("", token_views.profile, name="profile"),
    path("language/", token_views.language, name="language"),
    path("tokens/<int:pk>/revoke/", token_views.token_revoke, name="token_revoke"),
]
