"""The coaching API's routes, composed into the `api` namespace by config/urls.py."""

from django.urls import path

from coaching import api

urlpatterns = [
    path("coaching/", api.SessionListView.as_view(), name="coaching-list"),
    path("coaching/<int:pk>/", api.SessionDetailView.as_view(), name="coaching-detail"),
    path("coaching/<int:pk>/acknowledge/", api.SessionAcknowledgeView.as_view(), name="coaching-acknowledge"),
    path("coaching/<int:pk>/comments/", api.SessionCommentView.as_view(), name="coaching-comments"),
]
