from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from qa.api.views import RecordingReviewView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="review-queue", permanent=False)),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("review/", include("reviews.urls")),
    path("reports/", include("reviews.reports.urls")),
    path("api/reports/", include("reviews.reports.api_urls")),
    path("api/", include("qa.api.urls")),
    # The review path given to external tools, without the trailing slash (no APPEND_SLASH redirect).
    path("recordings/<int:pk>/review", RecordingReviewView.as_view(), name="recording-review-alias"),
]
