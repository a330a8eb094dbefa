from django.urls import path

from calls import views

app_name = "calls"

urlpatterns = [
    path("", views.call_list, name="list"),
    path("assign/", views.assign, name="assign"),
    path("reviewers/", views.throughput, name="reviewers"),
    path("queue/", views.queue_bulk, name="queue-bulk"),
    path("saved/", views.saved_search_create, name="saved-create"),
    path("saved/<int:pk>/delete/", views.saved_search_remove, name="saved-delete"),
]
