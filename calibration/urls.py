from django.urls import path

from calibration import views

urlpatterns = [
    path("", views.session_list, name="calibration-list"),
    path("new/", views.session_create, name="calibration-create"),
    path("<int:pk>/", views.session_detail, name="calibration-detail"),
    path("<int:pk>/close/", views.session_close, name="calibration-close"),
    path("<int:pk>/agree/", views.agree, name="calibration-agree"),
    path("<int:pk>/calls/<int:recording_id>/", views.call_score, name="calibration-score"),
]
