from django.urls import path

from disputes import views

app_name = "disputes"

urlpatterns = [
    path("", views.dispute_index, name="list"),
    path("reviews/", views.reviews_followed, name="reviews"),
    path("<int:pk>/", views.detail, name="detail"),
]
