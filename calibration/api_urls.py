from django.urls import path

from calibration import api

app_name = "calibrations-api"

urlpatterns = [
    path("", api.SessionListView.as_view(), name="list"),
    path("<int:pk>/", api.SessionDetailView.as_view(), name="detail"),
    path("<int:pk>/entries/", api.EntryView.as_view(), name="entries"),
    path("<int:pk>/close/", api.CloseView.as_view(), name="close"),
]
