from django.urls import path

from experiments import api

app_name = "experiments-api"

urlpatterns = [
    path("", api.ExperimentsView.as_view(), name="list"),
    path("<int:pk>/", api.ExperimentDetailView.as_view(), name="detail"),
]
