from django.urls import path

from reviews import views

urlpatterns = [
    path("", views.queue, name="review-queue"),
    path("next/", views.next_item, name="review-next"),
    path("<int:pk>/", views.detail, name="review-detail"),
    path("<int:pk>/release/", views.release, name="review-release"),
]
