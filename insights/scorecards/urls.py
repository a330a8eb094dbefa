from django.urls import path

from insights.scorecards import views

app_name = "scorecards"

urlpatterns = [
    path("", views.scorecard_page, name="scorecard"),
    path("agent/", views.agent_page, name="agent"),
]
