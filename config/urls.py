from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from access import API_DOCS, ApiAccess
import config.accounts
import qa.api.urls
import reviews.api.urls
import disputes.api_urls
import coaching.api_urls
import insights.reports.admin  # noqa: F401  (the rubric's admin page with each criterion's health)
import routing.api
import rubrics.api
import webhooks.api.urls
from qa.api.views import api_not_found
from reviews import views as review_views
from reviews.api.views import RecordingReviewView

class ApiSchemaView(SpectacularAPIView):
    permission_classes = [ApiAccess]  # drf-spectacular's own default lets anyone in
    session_permissions = {"GET": API_DOCS}


class ApiDocsView(SpectacularSwaggerSplitView):
    """The docs page: a browser sends no key, so an anonymous visitor is sent to log in."""

    permission_classes = [ApiAccess]
    session_permissions = {"GET": API_DOCS}

    def dispatch(self, request, *args, **kwargs):
        if not (settings.QA_API_DOCS_PUBLIC or request.user.is_authenticated):
            return redirect_to_login(request.get_full_path())
        return super().dispatch(request, *args, **kwargs)


# One `api` namespace, each app serving what it owns (rubrics ← qa ← reviews).
api_urlpatterns = [
    *rubrics.api.urlpatterns,
    *routing.api.urlpatterns,
    *qa.api.urls.urlpatterns,
    *reviews.api.urls.urlpatterns,
    *disputes.api_urls.urlpatterns,
    *coaching.api_urls.urlpatterns,
    *webhooks.api.urls.urlpatterns,
    path("schema/", ApiSchemaView.as_view(), name="schema"),
    # Swagger UI's files come from drf-spectacular-sidecar through staticfiles: no CDN; the split view
    # serves its start-up script as a file (docs/?script=), so the page needs no inline script (CSP).
    path("docs/", ApiDocsView.as_view(url_name="api:schema"), name="docs"),
    # Last: unknown API URLs (a non-numeric id, a typo) answer JSON, as every API error does.
    re_path(r"^", api_not_found),  # a prefix match: any rest of the path, newlines included
]

# The admin is where rubric owners work: it carries the product's name, not "Django administration".
admin.site.site_header = admin.site.site_title = "Veredicto"

urlpatterns = [
    path("", review_views.home, name="home"),
    path("admin/", admin.site.urls),
    path("accounts/", include(config.accounts.urlpatterns)),  # login, and password reset only with e-mail
    path("accounts/", include("django.contrib.auth.urls")),
    path("oidc/", include(config.accounts.sso_urlpatterns)),  # single sign-on, when configured
    path("i18n/", include("django.conf.urls.i18n")),
    path("review/", include("reviews.urls")),
    path("dashboard/", include("insights.dashboard.urls")),
    path("reports/", include("insights.reports.urls")),
    path("calibrations/", include("calibration.urls")),
    path("api/reports/", include("insights.reports.api_urls")),
    path("calls/", include("calls.urls")),
    path("api/calls/", include("calls.api_urls")),
    path("scorecards/", include("insights.scorecards.urls")),
    path("api/scorecards/", include("insights.scorecards.api_urls")),
    path("api/calibrations/", include("calibration.api_urls")),
    path("experiments/", include("experiments.urls")),
    path("me/", include("insights.agents.urls")),
    path("disputes/", include("disputes.urls")),
    path("coaching/", include("coaching.urls")),
    path("api/experiments/", include("experiments.api_urls")),
    path("api/export/", include("exports.api_urls")),
    path("intake/", include("intake.urls")),
    path("api/", include((api_urlpatterns, "api"))),
    # The review path given to external tools, without the trailing slash (no APPEND_SLASH redirect).
    path("recordings/<int:pk>/review", RecordingReviewView.as_view(), name="recording-review-alias"),
    # Any other id there (not a number) gets the API's JSON 404, as under /api/, not the site's HTML page.
    re_path(r"^recordings/[^/]+/review$", api_not_found),
]
