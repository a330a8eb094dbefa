from django.urls import path

from reviews import listening, upload, views

urlpatterns = [
    path("", views.queue, name="review-queue"),
    path("next/", views.next_item, name="review-next"),
    path("<int:pk>/", views.detail, name="review-detail"),
    path("<int:pk>/release/", views.release, name="review-release"),
    path("undo/<int:pk>/", views.undo, name="review-undo"),
    path("<int:pk>/audio/", listening.recording_audio, name="review-audio"),
    path("upload/", upload.recording_upload, name="review-upload"),
]
