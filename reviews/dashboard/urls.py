from django.urls import path

from reviews.dashboard import views

urlpatterns = [path("", views.DashboardView.as_view(), name="dashboard")]
