from django.urls import path
from django.views.generic import TemplateView

urlpatterns = [
    # The review queue replaces this page (issue: review queue).
    path("", TemplateView.as_view(template_name="base.html"), name="review-queue"),
]
