"""The export's columns: each kind's names, in order, with their type and meaning. They are the contract
with the BI systems that load the files, so a column is only ever added at the end, never renamed or
removed; docs/api/export.md documents these very lists (tests/exports/test_export.py compares them).

No free text leaves this way: quotes, rationales, comments and dispute reasons can hold what a customer
said; they stay behind the API's per-call reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # "int", "float", "bool", "text", "timestamp" (UTC)
    meaning: str


def _call() -> list[Column]:
    """The call a row is about: the same columns in every kind."""
    return [
        Column("recording_id", "int", "the call's id in Veredicto"),
        Column("external_id", "text", "the call's id in the system that sent it"),
        Column("source", "text", "the system that sent it"),
        Column("team", "text", "the call's team"),
        Column("agent_id", "text", "the agent's id"),
        Column("occurred_at", "timestamp", "when the call took place"),
        Column("rubric", "text", "the rubric's slug"),
        Column("rubric_version", "int", "the rubric's version"),
    ]


SCORES = [
    Column("id", "int", "the score's id: the row's key"),
    Column("run_id", "int", "the judgment (judge run) the score belongs to"),
    *_call(),
    Column("criterion", "text", "the criterion's key"),
    Column("judged_at", "timestamp", "when the judgment finished"),
    Column("judge_model", "text", "the model that judged"),
    Column("prompt_version", "text", "the prompt's version"),
    Column("verifier_version", "text", "the quote verifier's version"),
    Column("verified", "bool", "whether the judge's quote verified: only then does its value exist"),
    Column("unverified_mark", "text", "`NO VERIFICADA / NOT VERIFIED` when the quote did not verify, else empty"),
    Column("value", "int", "the judge's value; null when the quote did not verify, or the criterion does not apply"),
    Column("not_applicable", "bool", "the judge found the criterion does not apply; null when the quote did not verify"),
    Column("confidence", "float", "the confidence after verification (0 when the quote did not verify)"),
    Column("verification_status", "text", "the verifier's outcome (verified, not_found, ...)"),
]

REVIEWS = [
    Column("id", "int", "the review's id: the row's key"),
    Column("run_id", "int", "the judgment the review is about"),
    *_call(),
    Column("reviewer", "text", "who reviewed (a person's username, or a system's name)"),
    Column("decision", "text", "approve, reject or needs_review"),
    Column("reject_reason", "text", "on a reject, what was wrong overall (may be empty)"),
    Column("blind", "bool", "the reviewer entered values before seeing the judge's"),
    Column("from_dispute", "bool", "a QA lead's resolution of an agent's dispute"),
    Column("created_at", "timestamp", "when the review was made"),
    Column("undone", "bool", "the reviewer undid it: it stands for nothing"),
    Column("human_values", "text", "the human value per criterion key, as a JSON object (criteria without a number left out)"),
]

DISPUTES = [
    Column("id", "int", "the dispute's id: the row's key"),
    Column("review_id", "int", "the review disputed"),
    *_call(),
    Column("status", "text", "open or resolved"),
    Column("created_at", "timestamp", "when the agent opened it"),
    Column("due_at", "timestamp", "when it is due"),
    Column("resolved_at", "timestamp", "when a QA lead resolved it"),
    Column("resolution_review_id", "int", "the new final review its upheld criteria made; null when none was upheld"),
    Column("criteria_disputed", "int", "how many criteria the agent disputed"),
    Column("criteria_upheld", "int", "how many of them the lead upheld"),
    Column(
        "criteria",
        "text",
        "per criterion, as a JSON list: key, proposed_value, proposed_not_applicable, outcome, resolved_value, "
        "resolved_not_applicable",
    ),
]

CALIBRATION = [
    Column("id", "int", "the agreed value's id: the row's key"),
    Column("session_id", "int", "the calibration session"),
    Column("session_name", "text", "its name"),
    Column("session_closed_at", "timestamp", "when its lead closed it"),
    *_call(),
    Column("criterion", "text", "the criterion's key"),
    Column("agreed_value", "int", "the value agreed; null when it does not apply"),
    Column("agreed_not_applicable", "bool", "the session agreed the criterion does not apply"),
    Column("agreed_at", "timestamp", "when the value was last recorded"),
    Column("participants", "int", "how many people scored the session"),
    Column("judge_verified", "bool", "whether the judge's quote verified for this call and criterion"),
    Column("judge_value", "int", "the judge's value; null when its quote did not verify, or it does not apply"),
    Column("judge_unverified_mark", "text", "`NO VERIFICADA / NOT VERIFIED` when the judge's quote did not verify"),
]

KINDS: dict[str, list[Column]] = {"scores": SCORES, "reviews": REVIEWS, "disputes": DISPUTES, "calibration": CALIBRATION}
