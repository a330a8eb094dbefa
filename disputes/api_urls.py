"""The disputes' API routes, composed into the `api` namespace by config/urls.py."""

from django.urls import path

from disputes import api

urlpatterns = [
    path("disputes/", api.DisputeListView.as_view(), name="dispute-list"),
    path("disputes/<int:pk>/", api.DisputeDetailView.as_view(), name="dispute-detail"),
    path("disputes/<int:pk>/resolve/", api.DisputeResolveView.as_view(), name="dispute-resolve"),
    path("reviews/<int:pk>/dispute/", api.ReviewDisputeView.as_view(), name="review-dispute"),
    path("reviews/<int:pk>/acknowledge/", api.ReviewAcknowledgeView.as_view(), name="review-acknowledge"),
]
