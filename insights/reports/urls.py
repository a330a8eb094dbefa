from django.urls import path

from insights.reports import views

app_name = "reports"

urlpatterns = [
    path("", views.reports_index, name="index"),
    path("deviation/", views.DeviationView.as_view(), name="deviation"),
    path("deviation/scores/", views.DeviationScoresView.as_view(), name="deviation-scores"),
    path("deviation/recordings/", views.DeviationRecordingsView.as_view(), name="deviation-recordings"),
    path("evidence/", views.EvidenceView.as_view(), name="evidence"),
    path("evidence/scores/", views.EvidenceScoresView.as_view(), name="evidence-scores"),
    path("versions/", views.VersionsView.as_view(), name="versions"),
]
