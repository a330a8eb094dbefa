from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="review-queue", permanent=False)),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("review/", include("reviews.urls")),
    path("reports/", include("reviews.reports.urls")),
    path("api/reports/", include("reviews.reports.api_urls")),
]
