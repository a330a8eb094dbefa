from django.urls import path

from insights.scorecards import api

app_name = "scorecards-api"

urlpatterns = [
    path("", api.ScorecardView.as_view(), name="scorecard"),
]
