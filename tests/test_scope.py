"""One place decides what a person or a key may see (access.scope): no view, API, form or selector reads
the rows of a workspace (recordings, scores, runs, reviews, rubrics, calibrations, experiments, keys)
from a model's manager without the scope.

Read from the source: a function that reads `Recording.objects` (or `get_object_or_404(Recording, ...)`,
and so on for the models below) must also name the scope: its one door, `Model.objects.visible_to(scope)` (access.querysets; each scoped
model declares its field paths once, as `scope_paths`), or `recordings_q`, `workspaces_q`, `rubrics_in`, the
API's `recording_check_visible`, `experiments_list`. Views, API
views and forms may not do otherwise at all; a selector may only where it is listed below, with the
reason its rows are already in scope (it reads by the ids, the session or the experiment its caller
took from a scoped read). A new read without the scope, or a new unlisted selector, fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = [
    "core", "qa", "intake", "reviews", "calibration", "routing", "calls", "disputes", "experiments", "insights", "coaching",
    "exports", "rubrics", "webhooks",
]
MODELS = {
    "Recording", "Transcription", "JudgeRun", "Score", "Review", "CriterionReview", "Rubric", "CalibrationSession",
    "CalibrationCall", "CalibrationEntry", "AgreedValue", "Experiment", "Arm", "Item", "ItemScore", "ScorecardWeek",
    "ScorecardDay", "ApiKey", "CoachingSession", "SelfReview",
}  # fmt: skip
MARKERS = (
    "scope", "visible_to", "recordings_q", "workspaces_q", "rubrics_in", "recording_check_visible",
    "experiments_list",
)  # fmt: skip
ENTRY_MODULES = {"views.py", "api.py", "forms.py", "upload.py", "listening.py"}
# Modules of reads: a read there without the scope must be listed below with its reason.
READ_MODULES = {"selectors.py", "reference.py"}

# Reads whose rows their caller already scoped; each says how.
SCOPED_BY_CALLER = {
    # The request's key is who is asking: found by its own prefix, then it is the scope.
    ("core/api/authentication.py", "_key_for"): "the key being authenticated",
    ("qa/api/services.py", "api_key_create"): "a write",
    ("qa/api/services.py", "api_key_revoke"): "a write, from the scoped key admin",
    # The API's detail narrows this with recording_check_visible.
    ("qa/selectors.py", "recording_details"): "reviews.api's detail checks it (recording_check_visible)",
    ("qa/selectors.py", "recording_active_run"): "of a recording already read in scope",
    # Calibration: a session is read through session_get (its lead's workspace or its participants),
    # and everything else of the session through it.
    ("calibration/selectors.py", "calibration_pool"): "a rubric the lead chose in scope",
    ("calibration/selectors.py", "session_overview"): "of a session from session_get",
    ("calibration/selectors.py", "session_own_progress"): "of a session from session_get",
    ("calibration/selectors.py", "scoring_page"): "of a session from session_get",
    ("calibration/selectors.py", "session_results"): "of a session from session_get",
    # Experiments: an experiment comes from experiments_list(scope=...); its rows through it.
    ("experiments/selectors.py", "experiment_recording_ids"): "a rubric family, one workspace's",
    ("experiments/selectors.py", "experiment_progress"): "of an experiment in scope",
    ("experiments/selectors.py", "_comparison_cells"): "of an experiment in scope",
    ("experiments/selectors.py", "_usage"): "of an experiment in scope",
    ("experiments/selectors.py", "experiment_criterion_rows"): "of an experiment in scope",
    # Reports: ReportFilters carries the reader's scope, which report_run_q applies to every read.
    ("insights/reports/selectors.py", "period_tallies"): "place_q(filters) applies filters.scope",
    ("insights/reports/selectors.py", "_score_rows"): "entries of scores read in scope",
    ("insights/reports/selectors.py", "_judged_scores"): "report_run_q(filters) applies filters.scope",
    ("insights/reports/selectors.py", "_scores_by_runs"): "report_run_q(filters) applies filters.scope",
    ("insights/reports/selectors.py", "judge_costs"): "report_run_q(filters) applies filters.scope",
    ("insights/reports/selectors.py", "previous_reviewed_version"): "a version of a rubric read in scope",
    # Scorecards: the rubric came from the reader's form; rows are cut to their teams in scorecard().
    ("insights/scorecards/selectors.py", "_calls"): "the reader's rubric; agent_card filters filters.scope",
    ("insights/scorecards/selectors.py", "_current_scores"): "report_run_q(filters) applies filters.scope",
    ("insights/dashboard/selectors.py", "no_review"): "report_run_q(filters) applies filters.scope",
    # The review queue and its shared reads.
    ("reviews/selectors.py", "blind_recordings_for"): "narrows (excludes), never widens, what a reader sees",
    ("reviews/reference.py", "latest_reviews"): "its callers filter it (report_run_q, ids in scope)",
    ("reviews/reference.py", "review_values"): "of reviews read in scope",
    ("reviews/reference.py", "_closed_agreed_values"): "for recording ids read in scope",
    ("reviews/reference.py", "human_reference_rows"): "for recording ids read in scope",
    ("reviews/selectors.py", "_reviews"): "of a recording read in scope",
    ("reviews/selectors.py", "review_qualities"): "of reviews its caller read in scope",
    ("calibration/selectors.py", "calibration_pool_of_earlier_versions"): "earlier versions of a rubric in scope",
    # Find calls: calls_visible(user) applies the scope; the rest reads by its calls or their ids.
    ("calls/selectors.py", "call_search"): "the scores of calls from calls_visible",
    ("calls/selectors.py", "call_page"): "by the ids of a page of calls_visible",
    # Agents and disputes: agent_recordings(user) is the agent's scope, leading(user) the lead's.
    ("disputes/selectors.py", "call_view"): "of a recording its caller read in scope",
    ("disputes/selectors.py", "upheld_dispute_recordings"): "narrows a set its caller scoped",
    # The routing guarantee's certification: the beat's, over every workspace's audit; what it writes is shown only
    # through a rubric read in scope (routing_table).
    ("routing/selectors.py", "judgments_to_certify"): "the beat's certification of every rubric",
    ("routing/selectors.py", "audited_pairs"): "the beat's certification, of one rubric's judgments",
    # The toast's Undo: review_void refuses anyone but the review's own author.
    ("reviews/views.py", "undo"): "the reviewer's own review (review_void checks)",
}


def unscoped_reads(path: Path) -> set[tuple[str, str]]:
    """(module, function) of each read of a workspace's rows from a manager that does not name the scope."""
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    found: set[tuple[str, str]] = set()
    module = path.relative_to(ROOT).as_posix()

    def reads_a_model(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            return isinstance(node.value, ast.Name) and node.value.id in MODELS
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_object_or_404":
            return bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id in MODELS
        return False

    def visit(node: ast.AST, function: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if reads_a_model(child):
                body = ast.get_source_segment(source, inner) if inner is not None else ""
                if not any(marker in body for marker in MARKERS):
                    found.add((module, inner.name if inner is not None else "<module>"))
            visit(child, inner)

    visit(tree, None)
    return found


def scanned_modules() -> list[Path]:
    return [
        path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if not {"migrations", "management", "tests"} & set(path.parts)
        and (path.name in ENTRY_MODULES or path.name in READ_MODULES or "api" in path.parts)
    ]


def test_every_view_api_form_and_selector_reads_through_the_scope():
    found = set().union(*(unscoped_reads(path) for path in scanned_modules()))
    assert found - SCOPED_BY_CALLER.keys() == set()
    # And the list keeps no stale entry: each names a read that is still there.
    assert SCOPED_BY_CALLER.keys() - found == set()


def test_the_scan_catches_a_view_reading_recordings_without_the_scope(tmp_path, monkeypatch):
    monkeypatch.setattr("tests.test_scope.ROOT", tmp_path)
    (tmp_path / "views.py").write_text(
        "def leaky(request, pk):\n    return get_object_or_404(Recording, pk=pk)\n\n"
        "def fine(request):\n    return Recording.objects.filter(scope_for(request.user).recordings_q())\n\n"
        "def list_all(request):\n    return Score.objects.all()\n"
    )
    assert unscoped_reads(tmp_path / "views.py") == {("views.py", "leaky"), ("views.py", "list_all")}
