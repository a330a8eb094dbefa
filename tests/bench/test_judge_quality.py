"""The judge-quality benchmark: its figures on a worked example, and a smoke run of the runner against
the suite's scripted OpenAI-compatible server (real HTTP, the real `openai` client), every figure
computed by hand for the scripted answers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from bench.judge_quality import run as runner
from bench.judge_quality.metrics import Pair, agreement, calibration, ceiling, figures
from tests.support.fake_openai import FakeOpenAI, completion, transcript_of

# --- The metric functions on a worked example --------------------------------------------------------


def test_agreement_counts_na_against_na_as_agreement_and_na_against_a_number_as_disagreement():
    pairs = [(5, 5), (4, 5), (2, 5), (None, None), (None, 3), (3, None)]
    result = agreement(pairs)
    assert result["n"] == 6
    assert result["exact"] == pytest.approx(2 / 6)  # (5,5) and (n/a,n/a)
    assert result["within_one"] == pytest.approx(3 / 6)  # and (4,5); (2,5) is 3 apart, n/a vs 3 disagrees
    # QWK over the numeric pairs (5,5), (4,5), (2,5): every label is 5, so chance disagreement equals the
    # observed one: observed 0+1+9 = 10 over 3 pairs, expected per pair (0+1+9)/3 with labels all 5 -> kappa 0.
    assert result["qwk"] == pytest.approx(0.0)


def test_calibration_bands_and_expected_calibration_error_by_hand():
    items = [(0.95, True), (0.95, False), (0.7, True), (0.65, False), (0.65, False), (0.2, False)]
    bands, ece = calibration(items)
    assert [(band["band"], band["n"]) for band in bands] == [("0.0-0.3", 1), ("0.3-0.6", 0), ("0.6-0.9", 3), ("0.9-1.0", 2)]
    assert bands[1]["exact"] is None and bands[1]["mean_confidence"] is None
    assert bands[2]["exact"] == pytest.approx(1 / 3) and bands[2]["mean_confidence"] == pytest.approx(2.0 / 3)
    # 1/6·|0 − 0.2| + 3/6·|1/3 − 2/3| + 2/6·|0.5 − 0.95| = 0.0333 + 0.1667 + 0.15
    assert ece == pytest.approx(0.2 / 6 + 0.5 / 3 + 0.45 / 3)
    assert calibration([])[1] is None


def test_an_unverified_answer_is_no_value_and_only_lowers_coverage():
    pairs = [
        Pair("c1", "k", 5, 1, answered=True, value=5, verified=True, status="verified", confidence=0.9,
             in_deciding_turn=True),
        Pair("c2", "k", 5, 2, answered=True, value=1, verified=False, status="wrong_subject", confidence=0.9),
        Pair("c3", "k", 3, None),  # its call failed: no answer at all
    ]
    result = figures(pairs)
    assert (result["pairs"], result["judged"], result["answered"]) == (3, 1, 2)
    assert result["coverage"] == pytest.approx(1 / 3)
    assert result["exact"] == 1.0 and result["within_one"] == 1.0
    assert result["verified"] == 0.5 and result["wrong_subject"] == 0.5
    assert result["deciding_turn"] == 1.0


def test_the_human_ceiling_compares_only_the_pairs_both_labelled():
    first = {"c1": {"a": 5, "b": None}, "c2": {"a": 3, "b": 2}}
    second = {"c1": {"a": 4, "b": None}, "c3": {"a": 1}}
    overall, criteria = ceiling(first, second)
    assert (overall["n"], overall["exact"], overall["within_one"]) == (2, 0.5, 1.0)
    assert criteria["a"]["n"] == 1 and criteria["a"]["exact"] == 0.0
    assert ceiling(first, {})[0] == {"n": 0, "exact": None, "within_one": None, "qwk": None}


# --- A smoke run against the scripted server -----------------------------------------------------------

CALLS = {
    "fx-001": (
        "AGENT: Good morning, thank you for calling Harbor Bank, you are through to the branch line.\n"
        "CUSTOMER: Hi, what time do your branches open on Saturdays?\n"
        "AGENT: So you would like to know the Saturday opening hours of our branches.\n"
        "CUSTOMER: Yes, that is right.\n"
        "AGENT: Our branches open from nine to one on Saturdays.\n"
        "CUSTOMER: Great, thanks, that is all I needed.\n"
        "AGENT: Is there anything else I can help with today? Have a nice day.\n"
    ),
    "fx-002": (
        "AGENT: Hello, Harbor Bank, how can I help you today?\n"
        "CUSTOMER: My card was declined at the supermarket this morning.\n"
        "AGENT: Before I look at the account, can you confirm the last four digits of the card?\n"
        "CUSTOMER: Please just unblock the card quickly.\n"
        "AGENT: I see the card was blocked after a suspicious payment, I have unblocked it now.\n"
    ),
}
FIRST = {  # labeller A: (value, deciding turn)
    "fx-001": {"greeting": (5, 1), "verification": ("n/a", None), "understands-request": (5, 3),
               "resolution": (5, 5), "timeframe": ("n/a", None), "closing": (5, 7)},
    "fx-002": {"greeting": (5, 1), "verification": (5, 3), "understands-request": (1, None),
               "resolution": (5, 5), "timeframe": ("n/a", None), "closing": ("n/a", None)},
}
SECOND = {  # labeller B, on fx-001 only
    "fx-001": {"greeting": (5, 1), "verification": ("n/a", None), "understands-request": (3, 3),
               "resolution": (5, 5), "timeframe": ("n/a", None), "closing": (4, 7)},
}
# The judge's scripted answers: (value, the line it quotes (1-based) or a literal quote, confidence).
ANSWERS = {
    "fx-001": {
        "greeting": (5, 1, 0.95),  # verified, = label, in the deciding turn
        "verification": (None, 2, 0.9),  # n/a, its quote verified (any speaker): agrees with the label n/a
        "understands-request": (4, 3, 0.7),  # verified, one below the label
        "resolution": (5, 6, 0.9),  # quotes the customer for an agent criterion: wrong_subject, no value
        "timeframe": (3, 5, 0.5),  # verified, but the label is n/a: disagrees
        "closing": (4, "AGENT: We will call you back tomorrow morning.", 0.9),  # not in the call: no value
    },
    "fx-002": {
        "greeting": (4, 1, 0.8),  # verified, one below the label
        "verification": (5, 4, 0.9),  # the customer's words: wrong_subject
        "understands-request": (3, 5, 0.6),  # verified, two above the label
        "resolution": (5, 3, 0.95),  # = label, but quotes turn 3, not the deciding turn 5
        "timeframe": (None, 5, 0.9),  # n/a = label n/a
        "closing": (1, "", 0.2),  # nothing quoted: empty, no value
    },
}
TOKENS = {"fx-001": (1200, 300), "fx-002": (800, 100)}


def write_set(root: Path) -> None:
    for folder in ("calls", "labels", "labels-second"):
        (root / folder).mkdir(parents=True)
    for external_id, transcript in CALLS.items():
        call = {"external_id": external_id, "rubric": "customer-care", "agent": {"id": "jq-ag-99", "name": "Test"},
                "team": "cards", "channel": "voice", "language": "en", "occurred_at": "2026-11-03T09:00:00-05:00",
                "duration_seconds": 60, "transcript_source": "human", "transcript": transcript}
        (root / "calls" / f"{external_id}.yaml").write_text(yaml.safe_dump(call, allow_unicode=True))
    for folder, labeller, labels in (("labels", "A", FIRST), ("labels-second", "B", SECOND)):
        for external_id, criteria in labels.items():
            data = {"external_id": external_id, "labeller": labeller, "criteria": {
                key: {"value": value, "turn": turn, "why": "Worked example."} for key, (value, turn) in criteria.items()
            }}
            (root / folder / f"{external_id}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def scripted(request):
    """The answer the table above scripts, quoting the transcript the judge was sent (redacted or not)."""
    lines = transcript_of(request).splitlines()
    external_id = "fx-002" if "supermarket" in lines[1] else "fx-001"
    scores = {
        key: {"evidence": lines[quote - 1] if isinstance(quote, int) else quote, "rationale": "Scripted.",
              "value": value, "confidence": confidence}
        for key, (value, quote, confidence) in ANSWERS[external_id].items()
    }
    prompt_tokens, completion_tokens = TOKENS[external_id]
    return completion({"scores": scores}, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


@pytest.mark.django_db
def test_smoke_run_gives_the_figures_computed_by_hand(tmp_path, capsys):
    write_set(tmp_path / "set")
    with FakeOpenAI(default=scripted) as server:
        report = runner.main(["--base-url", server.base_url, "--model", "fake-judge", "--set", str(tmp_path / "set"),
                              "--json", str(tmp_path / "report.json")])
    assert len(server.requests) == 2
    assert json.loads((tmp_path / "report.json").read_text()) == json.loads(json.dumps(report))
    assert set(report) == {"calls", "overall", "criteria"}
    overall = report["overall"]
    # 12 pairs, all answered; verified: fx-001 greeting, verification, understands-request, timeframe and
    # fx-002 greeting, understands-request, resolution, timeframe.
    assert (overall["pairs"], overall["answered"], overall["judged"]) == (12, 12, 8)
    assert overall["coverage"] == pytest.approx(8 / 12) and overall["verified"] == pytest.approx(8 / 12)
    assert overall["wrong_subject"] == pytest.approx(2 / 12)
    # Judged (judge, label): (5,5) (n/a,n/a) (4,5) (3,n/a) | (4,5) (3,1) (5,5) (n/a,n/a).
    assert overall["exact"] == pytest.approx(4 / 8) and overall["within_one"] == pytest.approx(6 / 8)
    # QWK of (5,5) (4,5) (4,5) (3,1) (5,5): observed Σ(m−h)² = 6, n·expected = 78 -> 1 − 6·5/78 = 8/13.
    assert overall["qwk"] == pytest.approx(8 / 13)
    # Verified with a labelled turn: greeting ×2 and fx-001 understands-request in it, fx-002 resolution not.
    assert overall["deciding_turn"] == pytest.approx(3 / 4)
    bands = {band["band"]: (band["n"], band["exact"]) for band in overall["confidence_bands"]}
    assert bands == {"0.0-0.3": (0, None), "0.3-0.6": (1, 0.0), "0.6-0.9": (3, 0.0), "0.9-1.0": (4, 1.0)}
    # 1/8·|0 − 0.5| + 3/8·|0 − 0.7| + 4/8·|1 − 0.925|
    assert overall["ece"] == pytest.approx(0.3625)
    assert overall["prompt_tokens_per_call"] == 1000 and overall["completion_tokens_per_call"] == 200
    assert overall["seconds_per_call"] > 0 and overall["failed_calls"] == 0

    criteria = report["criteria"]
    assert list(criteria) == ["greeting", "verification", "understands-request", "resolution", "timeframe", "closing"]
    assert criteria["verification"]["exact"] == 1.0 and criteria["verification"]["coverage"] == 0.5
    assert criteria["verification"]["wrong_subject"] == 0.5
    assert (criteria["resolution"]["exact"], criteria["resolution"]["deciding_turn"]) == (1.0, 0.0)
    assert (criteria["greeting"]["exact"], criteria["greeting"]["within_one"]) == (0.5, 1.0)
    assert criteria["closing"]["judged"] == 0 and criteria["closing"]["exact"] is None
    assert criteria["closing"]["verified"] == 0.0
    scores = {row["external_id"]: row["scores"] for row in report["calls"]}
    assert scores["fx-001"]["resolution"]["status"] == "wrong_subject"
    assert scores["fx-002"]["closing"]["status"] == "empty"
    assert scores["fx-002"]["timeframe"]["value"] == "n/a"

    # The human ceiling, fx-001 only: (B, A) (5,5) (n/a,n/a) (3,5) (5,5) (n/a,n/a) (4,5); every numeric A
    # value is 5, so QWK is 0 (observed = chance).
    human = overall["human_ceiling"]
    assert (human["n"], human["exact"], human["within_one"]) == (6, pytest.approx(4 / 6), pytest.approx(5 / 6))
    assert human["qwk"] == pytest.approx(0.0)
    assert criteria["understands-request"]["human_ceiling"]["exact"] == 0.0
    assert criteria["closing"]["human_ceiling"]["within_one"] == 1.0

    printed = capsys.readouterr().out
    assert "OVERALL" in printed and "understands-request" in printed


def cited(request):
    """fx-002's scripted answers in reference mode: each criterion cites the turn the table quotes, whole;
    closing cites turn 99, which the call does not have."""
    scores = {
        key: {"evidence": [{"turn": quote if isinstance(quote, int) else 99, "words": ""}],
              "rationale": "Scripted.", "value": value, "confidence": confidence}
        for key, (value, quote, confidence) in ANSWERS["fx-002"].items()
    }
    return completion({"scores": scores}, prompt_tokens=800, completion_tokens=100)


@pytest.mark.django_db
def test_an_empty_second_labelling_leaves_the_ceiling_unmeasured_and_reference_mode_asks_for_turns(tmp_path):
    write_set(tmp_path / "set")
    for path in (tmp_path / "set" / "labels-second").iterdir():
        path.unlink()
    with FakeOpenAI(default=cited) as server:
        report = runner.main(["--base-url", server.base_url, "--model", "fake-judge", "--set", str(tmp_path / "set"),
                              "--calls", "fx-002", "--evidence", "reference"])
    (request,) = server.requests
    # The judge was asked for references: numbered turns in the prompt, a turn enum of the call's turns.
    assert "[3] AGENT: Before I look at the account" in request["messages"][-1]["content"]
    criterion = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]["greeting"]
    assert criterion["properties"]["evidence"]["items"]["properties"]["turn"]["enum"] == [1, 2, 3, 4, 5]
    assert [row["external_id"] for row in report["calls"]] == ["fx-002"]
    assert report["overall"]["failed_calls"] == 0 and report["overall"]["evidence"] == "reference"
    statuses = {key: score["status"] for key, score in report["calls"][0]["scores"].items()}
    assert statuses == {"greeting": "verified", "verification": "wrong_subject", "understands-request": "verified",
                        "resolution": "verified", "timeframe": "verified", "closing": "bad_reference"}
    assert report["overall"]["verified"] == pytest.approx(4 / 6)
    assert report["overall"]["human_ceiling"] == {"n": 0, "exact": None, "within_one": None, "qwk": None}


@pytest.mark.django_db
def test_a_failed_call_leaves_its_pairs_unjudged(tmp_path):
    write_set(tmp_path / "set")
    from tests.support.fake_openai import error

    with FakeOpenAI(default=lambda request: error(400, "bad request")) as server:
        report = runner.main(["--base-url", server.base_url, "--model", "fake-judge", "--set", str(tmp_path / "set"),
                              "--calls", "fx-001"])
    overall = report["overall"]
    assert overall["failed_calls"] == 1 and "400" in report["calls"][0]["error"]
    assert (overall["pairs"], overall["answered"], overall["coverage"]) == (6, 0, 0.0)
    assert overall["exact"] is None and overall["verified"] is None


@pytest.mark.django_db
def test_the_labelled_set_runs_through_the_product_path():
    """Three calls of the real set, answered by the server's default (every criterion at its maximum,
    quoting the transcript's first line): every call is asked its rubric's every criterion."""
    with FakeOpenAI() as server:
        report = runner.main(["--base-url", server.base_url, "--model", "fake-judge", "--calls", "jq-es-00[1-3]"])
    assert [row["external_id"] for row in report["calls"]] == ["jq-es-001", "jq-es-002", "jq-es-003"]
    assert report["overall"]["failed_calls"] == 0
    assert report["overall"]["answered"] == report["overall"]["pairs"] == 33


@pytest.mark.django_db
def test_the_human_ceiling_covers_only_the_calls_the_run_selected(tmp_path):
    write_set(tmp_path / "set")  # labels-second/ has fx-001 only
    with FakeOpenAI(default=scripted) as server:
        arguments = ["--base-url", server.base_url, "--model", "fake-judge", "--set", str(tmp_path / "set")]
        only_second = runner.main([*arguments, "--calls", "fx-002"])
        only_first = runner.main([*arguments, "--calls", "fx-001"])
    assert only_second["overall"]["human_ceiling"]["n"] == 0
    assert only_first["overall"]["human_ceiling"]["n"] == 6


def test_openai_own_api_is_asked_for_the_answer_shape_its_strict_mode_accepts(monkeypatch, settings):
    from qa.answer import STANDARD_SHAPE, UNBOUNDED_SHAPE
    from qa.llm import answer_shape_get

    monkeypatch.setenv("BENCH_JUDGE_KEY", "sk-test")
    settings.QA_JUDGE_KEY_VARIABLES = ["BENCH_JUDGE_KEY"]
    settings.QA_JUDGE_ALLOWED_HOSTS = ["api.openai.com", "127.0.0.1"]
    key = "BENCH_JUDGE_KEY"
    openai_judge = runner.judge_for(base_url="https://api.openai.com/v1", model="gpt-4.1-mini", api_key_env=key)
    server_judge = runner.judge_for(base_url="http://127.0.0.1:8000/v1", model="qwen", api_key_env=key)
    # The runner asks for the evidence mode its flag names (quote by default), in the shape each server takes:
    # no maxLength for OpenAI's own API, whose strict mode refuses it.
    assert answer_shape_get(openai_judge) == replace(UNBOUNDED_SHAPE, evidence_mode="quote")
    assert answer_shape_get(server_judge) == replace(STANDARD_SHAPE, evidence_mode="quote")


@pytest.mark.django_db
def test_a_bad_label_stops_the_run_naming_the_file_and_criterion(tmp_path, capsys):
    write_set(tmp_path / "set")
    path = tmp_path / "set" / "labels" / "fx-002.yaml"
    path.write_text(path.read_text().replace("value: 5", "value: five", 1))
    with FakeOpenAI(default=scripted) as server, pytest.raises(SystemExit):
        runner.main(["--base-url", server.base_url, "--model", "fake-judge", "--set", str(tmp_path / "set")])
    assert not server.requests
    assert "labels/fx-002.yaml greeting: value 'five' is neither an integer nor 'n/a'" in capsys.readouterr().err


@pytest.mark.django_db
def test_one_call_reports_combined_give_the_figures_of_one_run_over_the_same_calls():
    """combine.py: a run made a call at a time on a loaded machine reports what one run would (seconds aside)."""
    from bench.judge_quality.combine import combine

    arguments = ["--base-url", "", "--model", "fake-judge"]
    with FakeOpenAI() as server:
        arguments[1] = server.base_url
        whole = runner.main([*arguments, "--calls", "jq-es-00[1-3]"])
        parts = [runner.main([*arguments, "--calls", f"jq-es-00{number}"]) for number in (1, 2, 3)]
    combined = combine(parts, provenance={"machine": "test"})

    def without_time(report):
        return {**report["overall"], "seconds_per_call": None}

    assert combined["provenance"] == {"machine": "test"}
    assert [row["external_id"] for row in combined["calls"]] == ["jq-es-001", "jq-es-002", "jq-es-003"]
    assert without_time(combined) == without_time(whole)
    assert combined["criteria"] == whole["criteria"]


def test_the_readme_judge_table_reads_the_committed_results_and_they_combine_from_their_parts():
    """Every row of the README's judges table that links a results file says what that file says, and the
    file's figures are what combine.py gives from the parts it names (recorded model answers are data: the
    figures a person reads must come from them)."""
    import re

    from bench.judge_quality.combine import combine

    folder = Path(runner.__file__).parent / "results"
    readme = (Path(runner.__file__).parent / "README.md").read_text()
    rows = re.findall(r"^\| (.+?)\(\[JSON\]\(results/([\w.\-]+\.json)\)\)[^|]*\| (\w+) \| (\d+)[^|]*\| \**([\d.]+)\**"
                      r" \|[^|]*\|[^|]*\|[^|]*\| \**([\d.]+)\** \|", readme, re.M)  # fmt: skip
    assert len(rows) >= 4, rows

    def shown(figure):
        return f"{figure:.2f}"

    for _, name, evidence, calls, coverage, verified in rows:
        report = json.loads((folder / name).read_text())
        overall = report["overall"]
        assert (overall["evidence"], overall["calls"]) == (evidence, int(calls)), name
        assert (shown(overall["coverage"]), shown(overall["verified"])) == (coverage, verified), name
        parts = [json.loads((folder / "parts" / part).read_text()) for part in report["provenance"]["parts"]]
        again = combine(parts, provenance=report["provenance"])
        assert again["overall"] == overall, name
        assert again["criteria"] == report["criteria"], name
