"""The REST API for external systems (issue 5)."""
