from django.urls import path

from insights.dashboard import views

urlpatterns = [path("", views.DashboardView.as_view(), name="dashboard")]
