"""The recordings' API routes; `config/urls.py` composes them with the other apps' under the `api` namespace."""

from django.urls import path

from qa.api import views

urlpatterns = [
    path("recordings/", views.RecordingsView.as_view(), name="recording-list"),
    path("recordings/batch/", views.RecordingBatchView.as_view(), name="recording-batch"),
    path("recordings/<int:pk>/rejudge/", views.RecordingRejudgeView.as_view(), name="recording-rejudge"),
]
