"""The reviews' API: a recording with its reviews, and posting a review. The reports' API is `insights.reports.api`."""
