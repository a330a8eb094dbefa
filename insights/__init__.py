"""Insights: the figures drawn from the judged and reviewed calls. The reports (deviation, evidence
quality, versions), the scorecards and their weekly rollup, the dashboard, and an agent's own pages
(their scorecard and their calls), each a package with its views, urls, API and templates."""
