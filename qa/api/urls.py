from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from qa.api import views

app_name = "api"

urlpatterns = [
    path("recordings/", views.RecordingsView.as_view(), name="recording-list"),
    path("recordings/<int:pk>/", views.RecordingDetailView.as_view(), name="recording-detail"),
    path("recordings/<int:pk>/rejudge/", views.RecordingRejudgeView.as_view(), name="recording-rejudge"),
    path("recordings/<int:pk>/review/", views.RecordingReviewView.as_view(), name="recording-review"),
    path("rubrics/", views.RubricsView.as_view(), name="rubric-list"),
    path("rubrics/<slug:slug>/", views.RubricDetailView.as_view(), name="rubric-detail"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI's files come from drf-spectacular-sidecar through staticfiles: no CDN.
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    # Last: unknown API URLs (a non-numeric id, a typo) answer JSON, as every API error does.
    re_path(r"^", views.api_not_found),  # a prefix match: any rest of the path, newlines included
]
