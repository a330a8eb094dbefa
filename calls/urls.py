from django.urls import path

from calls import views

app_name = "calls"

urlpatterns = [
    path("", views.call_list, name="list"),
    path("assign/", views.assign, name="assign"),
    path("reviewers/", views.throughput, name="reviewers"),
]
