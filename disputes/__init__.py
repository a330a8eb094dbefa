"""Agents' side of a review: acknowledging it, disputing it within the window, and a QA lead resolving the dispute (a new final review, `Review.from_dispute`)."""
