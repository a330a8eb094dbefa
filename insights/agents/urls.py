from django.urls import path

from insights.agents import views

app_name = "agents"

urlpatterns = [
    path("", views.home, name="home"),
    path("scorecard/", views.scorecard, name="scorecard"),
    path("calls/<int:pk>/", views.call, name="call"),
    path("calls/<int:pk>/acknowledge/", views.acknowledge, name="acknowledge"),
    path("calls/<int:pk>/dispute/", views.dispute, name="dispute"),
]
