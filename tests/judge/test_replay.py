"""The replay server (qa.replay) and the first run's recorded judge (qa.recorded, `manage.py demo_judge`):
a recorded answer replayed through the real pipeline (the openai client over HTTP, the verifier,
routing) gives verified scores; a request that was not recorded is refused, naming its fingerprint."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.management.commands.demo_judge import DEMO_CALLS, WHY_QUOTES_FAIL
from qa.models import Judge, JudgeRun, Recording
from qa.recorded import recorded_judge_make_default
from qa.replay import recorded_create, recorded_load, replay_server_start, request_fingerprint
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SAMPLES_RECORDED = ROOT / "samples" / "recorded" / "qwen2.5-coder-1.5b.jsonl"
DISPLAY = "Test-Model-7B, recorded on 2026-12-03"


def new_recorded(tmp_path: Path, evidence_mode: str = "quote"):
    return recorded_create(path=tmp_path / "answers.jsonl",
                           header={"model": "Test-Model-7B", "display": DISPLAY, "server_model": "test-model-7b",
                                   "evidence_mode": evidence_mode, "recorded_at": "2026-12-03T21:00:00+00:00"})  # fmt: skip


def judge_once(recording: Recording) -> JudgeRun:
    run, _ = judge_run_create(recording=recording)
    judge_run_until_done(run_id=run.pk, sleep=lambda seconds: None)
    run.refresh_from_db()
    return run


def test_a_recorded_answer_is_replayed_through_the_pipeline_with_verified_scores(fake_llm, recording, tmp_path):
    fake_llm.script(lambda request: completion(answer_for(request)))  # quotes the first line: verifies
    recorder = replay_server_start(recorded=new_recorded(tmp_path), upstream=fake_llm.base_url, upstream_model="fake-judge")
    recorded_judge_make_default(recorded=recorder.recorded, base_url=recorder.base_url)
    recorded_run = judge_once(recording)
    recorder.shutdown()

    # A fresh replay server, reading only the file: no upstream to ask.
    recorded = recorded_load(tmp_path / "answers.jsonl")
    assert len(recorded.answers) == 1 and len(fake_llm.requests) == 1
    answer = next(iter(recorded.answers.values()))
    assert answer["fingerprint"] == request_fingerprint(fake_llm.requests[0])
    assert answer["prompt_tokens"] == 900 and answer["completion_tokens"] == 300 and answer["seconds"] >= 0
    replay = replay_server_start(recorded=recorded)
    judge = recorded_judge_make_default(recorded=recorded, base_url=replay.base_url)
    try:
        run = judge_once(recording)
    finally:
        replay.shutdown()

    assert len(fake_llm.requests) == 1  # the second judgment never reached a model
    assert run.status == JudgeRun.Status.SUCCEEDED and run.judge == judge
    assert run.model == DISPLAY and run.prompt_tokens == 900
    scores = list(run.scores.order_by("criterion__key"))
    assert scores and all(score.evidence_verified for score in scores)
    assert [score.value for score in scores] == [score.value for score in recorded_run.scores.order_by("criterion__key")]
    recording.refresh_from_db()
    assert recording.status == Recording.Status.JUDGED


def test_an_unknown_fingerprint_is_refused_naming_it(fake_llm, recording, tmp_path):
    recorded = new_recorded(tmp_path)
    replay = replay_server_start(recorded=recorded)
    body = {"model": "any", "messages": [{"role": "user", "content": "not recorded"}]}
    request = urllib.request.Request(f"{replay.base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 404
    message = json.load(refused.value)["error"]["message"]
    assert request_fingerprint(body) in message and "No recorded answer" in message

    recorded_judge_make_default(recorded=recorded, base_url=replay.base_url)
    try:
        run = judge_once(recording)
    finally:
        replay.shutdown()
    assert run.status == JudgeRun.Status.FAILED
    assert "HTTP 404" in run.error and "No recorded answer for request fingerprint" in run.error
    assert fake_llm.requests == []


def test_a_request_asked_again_while_the_model_answers_it_is_recorded_once(fake_llm, tmp_path):
    """A client that gives up on a slow local model and asks again waits for the first answer: the model
    judges the call once, the file holds one answer, and both askers get that answer."""
    fake_llm.latency = 1.0
    fake_llm.script(*[completion({"criteria": []})] * 2)
    recorder = replay_server_start(recorded=new_recorded(tmp_path), upstream=fake_llm.base_url, upstream_model="fake-judge")
    body = {"model": "any", "messages": [{"role": "user", "content": "<transcript>\nAGENT: Hello\n</transcript>"}]}
    answers: list[dict] = []

    def ask() -> None:
        request = urllib.request.Request(f"{recorder.base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as response:
            answers.append(json.load(response))

    askers = [threading.Thread(target=ask) for _ in range(2)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    recorder.shutdown()

    assert len(fake_llm.requests) == 1
    lines = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["header", "answer"]
    assert len(answers) == 2 and answers[0] == answers[1] == lines[1]["response"]


def test_a_transcript_that_came_out_differently_gets_the_nearest_recorded_answer(fake_llm, recording, tmp_path):
    """An audio call transcribed a few words differently on another machine: same rubric and prompt,
    nearly the same transcript. It gets the recorded answer, whose quotes are verified against the new
    transcript; another call, or another prompt, is still refused."""
    fake_llm.script(lambda request: completion(answer_for(request)))  # quotes the first line
    recorder = replay_server_start(recorded=new_recorded(tmp_path), upstream=fake_llm.base_url)
    recorded_judge_make_default(recorded=recorder.recorded, base_url=recorder.base_url)
    judge_once(recording)
    recorder.shutdown()
    recorded = recorded_load(tmp_path / "answers.jsonl")
    answer = next(iter(recorded.answers.values()))
    assert answer["transcript"] and "Telco Sur" in answer["transcript"] and answer["context"]

    replay = replay_server_start(recorded=recorded)
    recorded_judge_make_default(recorded=recorded, base_url=replay.base_url)
    try:
        # Two words heard differently, as a transcriber on another CPU might: the first line (quoted) kept.
        Recording.objects.filter(pk=recording.pk).update(
            transcript=recording.transcript.replace("me cobraron dos veces", "me colaron dos veces"))
        near = judge_once(Recording.objects.get(pk=recording.pk))
        # Another call of the same rubric: nothing near it was recorded.
        Recording.objects.filter(pk=recording.pk).update(
            transcript="AGENTE: Hola, soy Pedro.\nCLIENTE: Quiero cancelar la línea.\nAGENTE: Lo lamento, ¿por qué?\n")
        other = judge_once(Recording.objects.get(pk=recording.pk))
        stats = json.load(urllib.request.urlopen(f"{replay.base_url}/replay/stats", timeout=10))
    finally:
        replay.shutdown()

    assert near.status == JudgeRun.Status.SUCCEEDED and near.model == DISPLAY
    assert all(score.evidence_verified for score in near.scores.all())
    assert other.status == JudgeRun.Status.FAILED and "No recorded answer" in other.error
    assert len(fake_llm.requests) == 1  # neither reached a model
    [nearest] = stats["nearest"]
    assert nearest["recorded"] == answer["fingerprint"] and 0.9 < nearest["similarity"] < 1
    assert len(stats["refused"]) == 1 and stats["exact"] == []

    # With --nearest 0 the replay is exact only.
    exact_only = replay_server_start(recorded=recorded, nearest_floor=0)
    recorded_judge_make_default(recorded=recorded, base_url=exact_only.base_url)
    try:
        Recording.objects.filter(pk=recording.pk).update(
            transcript=recording.transcript.replace("me cobraron dos veces", "me colaron dos veces"))
        refused = judge_once(Recording.objects.get(pk=recording.pk))
    finally:
        exact_only.shutdown()
    assert refused.status == JudgeRun.Status.FAILED and "No recorded answer" in refused.error


def test_the_fingerprint_ignores_the_model_and_follows_the_messages():
    body = {"model": "a", "messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_object"}}
    assert request_fingerprint(body) == request_fingerprint({**body, "model": "b", "max_tokens": 9})
    assert request_fingerprint(body) != request_fingerprint({**body, "messages": [{"role": "user", "content": "y"}]})


def test_a_file_without_a_header_or_with_a_broken_line_is_refused(tmp_path):
    from qa.replay import RecordingFileError

    path = tmp_path / "broken.jsonl"
    path.write_text('{"kind": "answer", "fingerprint": "ab", "response": {}}\n', encoding="utf-8")
    with pytest.raises(RecordingFileError, match="no header record"):
        recorded_load(path)
    path.write_text('{"kind": "header"}\nnot json\n', encoding="utf-8")
    with pytest.raises(RecordingFileError, match="line 2: not JSON"):
        recorded_load(path)


def demo_judge(*args: str) -> str:
    out = StringIO()
    call_command("demo_judge", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_demo_judge_replays_what_was_recorded_and_judges_the_rest_live(fake_llm, tmp_path):
    """scripts/demo's judging (--no-serve ends after it): recorded calls by the recorded judge,
    named with its recording date; a call without a recording by the environment's judge."""
    call_command("load_samples", stdout=StringIO())
    fake_llm.script(lambda request: completion(answer_for(request)))
    recorder = replay_server_start(recorded=new_recorded(tmp_path), upstream=fake_llm.base_url)
    demo_judge("--recorded", str(tmp_path / "answers.jsonl"), "--base-url", recorder.base_url, "--calls", "es-001", "en-001")
    recorder.shutdown()
    asked = len(fake_llm.requests)
    replay = replay_server_start(recorded=recorded_load(tmp_path / "answers.jsonl"))
    try:
        output = demo_judge("--recorded", str(tmp_path / "answers.jsonl"), "--base-url", replay.base_url,
                            "--calls", "es-001", "en-001", "es-007")  # fmt: skip
    finally:
        replay.shutdown()

    assert asked == 2 and len(fake_llm.requests) == 3  # es-007 alone reached a live model
    assert f"with {DISPLAY} (replayed by {replay.base_url})" in output
    assert "Judged: 2   failed: 1" in output  # the replay server refused es-007's request...
    assert "No recorded answer for es-007: judged live by the bundled local model instead." in output
    assert "Judged: 1   failed: 0" in output  # ...which the environment's judge then judged
    # The summary's cost (issue 45): the recorded model ran locally, so its prices are 0, said so.
    assert "Cost: 0 for 2 calls: the judge's prices are 0 (a model run locally has no price per token)" in output
    assert WHY_QUOTES_FAIL in output
    agents = sorted(set(Recording.objects.filter(source="samples").values_list("agent_id", flat=True)))
    assert f"Sample agents (ids for the agents' pages and scorecards): {', '.join(agents)}" in output
    latest = {}
    for run in JudgeRun.objects.filter(status=JudgeRun.Status.SUCCEEDED).select_related("recording").order_by("pk"):
        latest[run.recording.external_id] = run
    assert latest["es-001"].model == DISPLAY and latest["en-001"].model == DISPLAY
    assert all(score.evidence_verified for score in latest["es-001"].scores.all())
    assert latest["es-007"].model == "fake-judge"
    assert Judge.objects.default().model == DISPLAY  # the recorded judge is the default again


def test_the_committed_recording_answers_the_demo_calls_as_this_code_asks_them(fake_llm):
    """samples/recorded/ holds an answer for every demo call its header lists: a change to the prompt,
    the schema, a sample rubric or call makes this fail (record again: docs/operations/judge-model.md).
    A demo call it does not list is judged live, by the environment's judge."""
    call_command("load_samples", stdout=StringIO())
    recorded = recorded_load(SAMPLES_RECORDED)
    assert "recorded on" in recorded.display_name and recorded.header["model"].startswith("Qwen2.5-Coder-1.5B-Instruct")
    listed = set(recorded.header["calls"])
    assert listed and listed <= set(DEMO_CALLS) and len(recorded.answers) >= len(listed)
    # Every answer keeps its request's transcript, so an audio call heard a little differently on this
    # machine is still answered (by the nearest transcript).
    kept = [answer for answer in recorded.answers.values() if "transcript" in answer]
    assert len(kept) == len(recorded.answers) and all(answer["transcript"] and answer["context"] for answer in kept)
    replay = replay_server_start(recorded=recorded)
    try:
        output = demo_judge("--recorded", str(SAMPLES_RECORDED), "--base-url", replay.base_url)
    finally:
        replay.shutdown()
    texts = Recording.objects.filter(source="samples", external_id__in=DEMO_CALLS).exclude(transcript="")
    assert texts.count() >= 3
    for recording in texts:
        run = JudgeRun.objects.filter(recording=recording, status=JudgeRun.Status.SUCCEEDED).latest("pk")
        expected = recorded.display_name if recording.external_id in listed else "fake-judge"
        assert run.model == expected, (recording.external_id, output)
        if recording.external_id in listed:
            assert run.scores.filter(evidence_verified=True).exists(), recording.external_id
    assert f"Cost: 0 for {len(listed & set(texts.values_list('external_id', flat=True)))} calls: the judge's prices are 0" in output
    # Every live request was for a call the recording does not list.
    assert len(fake_llm.requests) == texts.exclude(external_id__in=listed).count(), output
