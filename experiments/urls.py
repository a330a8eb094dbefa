from django.urls import path

from experiments import views

app_name = "experiments"

urlpatterns = [
    path("", views.index, name="index"),
    path("<int:pk>/", views.detail, name="detail"),
    path("<int:pk>/criteria/<slug:key>/", views.criterion, name="criterion"),
    path("<int:pk>/cancel/", views.cancel, name="cancel"),
    path("<int:pk>/arms/<int:arm_id>/<slug:action>/", views.promote, name="promote"),
]
