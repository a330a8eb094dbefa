from django.urls import path

from calls import api

app_name = "calls-api"

urlpatterns = [
    path("", api.CallListView.as_view(), name="list"),
]
