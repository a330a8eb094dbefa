"""The webhooks' API routes; `config/urls.py` composes them with the other apps' under the `api` namespace."""

from django.urls import path

from webhooks.api import views

urlpatterns = [
    path("webhooks/", views.SubscriptionsView.as_view(), name="webhook-list"),
    path("webhooks/<int:pk>/", views.SubscriptionDetailView.as_view(), name="webhook-detail"),
    path("webhooks/<int:pk>/deliveries/", views.DeliveriesView.as_view(), name="webhook-deliveries"),
    path(
        "webhooks/<int:pk>/deliveries/<uuid:delivery_id>/redeliver/",
        views.RedeliverView.as_view(),
        name="webhook-redeliver",
    ),
]
