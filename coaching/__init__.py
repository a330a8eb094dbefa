"""Coaching: sessions for one agent on the criteria they miss, the calls that show it, and a measured answer to
"did it work?" (coaching.effect, the scorecards' estimator before and after, beside the rest of the team)."""
