from django.urls import path

from exports.api import export_view
from exports.columns import KINDS

app_name = "export"

# One URL a kind, each its own name: /api/export/scores/, ... (the authorization matrix asks each).
urlpatterns = [path(f"{kind}/", export_view(kind), name=kind) for kind in KINDS]
