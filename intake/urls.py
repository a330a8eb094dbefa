from django.urls import path

from intake import views

app_name = "intake"
urlpatterns = [
    path("twilio/<slug:account>/recording/", views.twilio_recording_status, name="twilio-recording"),
]
