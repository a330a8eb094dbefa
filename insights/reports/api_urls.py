from django.urls import path

from insights.reports import api

app_name = "reports-api"

urlpatterns = [
    path("deviation/", api.DeviationReportView.as_view(), name="deviation"),
    path("evidence/", api.EvidenceReportView.as_view(), name="evidence"),
    path("versions/", api.VersionsReportView.as_view(), name="versions"),
]
