"""Find and assign: every judged call a user may see, searched by its words and filtered
(`/calls/`), a lead's assignment of calls to supervisors, and the reviewers' throughput."""
