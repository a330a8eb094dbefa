"""The reviews' API routes; `config/urls.py` composes them with the other apps' under the `api` namespace."""

from django.urls import path

from reviews.api import views

urlpatterns = [
    path("recordings/<int:pk>/", views.RecordingDetailView.as_view(), name="recording-detail"),
    path("recordings/<int:pk>/review/", views.RecordingReviewView.as_view(), name="recording-review"),
]
