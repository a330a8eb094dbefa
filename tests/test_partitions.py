"""Scores and events kept by month (docs/operations/storage.md): the partitions PostgreSQL holds, where a row
lands, the plans of the reports' reads, the retention's Parquet archive, and the migration from plain tables."""

from __future__ import annotations

import json
import re
import shlex
import time
import uuid
from datetime import UTC, date, datetime, timedelta

import pyarrow.parquet as pq
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from access.models import default_workspace_id
from coaching.models import CoachingCall, CoachingSession
from core.partitions import (
    MONTHS_AHEAD,
    archive_path,
    month_start,
    next_month,
    partition_create,
    partitions,
    partitions_ensure,
    retention_run,
)
from insights.reports.selectors import _judged_scores, _reviewed_scores
from insights.scorecards.selectors import _current_scores
from outbox.models import Event
from qa.models import JudgeRun, Score
from reviews.filters import ReportFilters
from reviews.periods import day_start
from tests.factories import JudgeRunFactory, ScoreFactory, UserFactory, judged_recording
from tests.support.docs import docs_blocks, docs_section, manage_commands
from webhooks.models import Attempt, Delivery, Subscription

pytestmark = pytest.mark.django_db


def this_month() -> date:
    return month_start(timezone.now().astimezone(UTC))


def months_back(count: int) -> date:
    month = this_month()
    for _ in range(count):
        month = (month - timedelta(days=1)).replace(day=1)
    return month


def where(table: str, pk: object) -> str:
    """The partition a row of `table` is in."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT tableoid::regclass::text FROM {table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def scanned(queryset) -> set[str]:
    """The tables PostgreSQL's plan for `queryset` reads (EXPLAIN (FORMAT JSON))."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "Relation Name" in node:
                found.add(node["Relation Name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(queryset.explain(format="JSON")))
    return found


def constraints_checked() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def old_event(at: datetime, **fields) -> Event:
    event = Event.objects.create(name="recording.judged", subject_type="recording", subject_id=1, **fields)
    Event.objects.filter(pk=event.pk).update(created_at=at)  # created_at is auto_now_add
    return Event.objects.get(pk=event.pk)


def old_run_scores(at: datetime) -> list[Score]:
    """A run made at `at` with a score for each of its rubric's criteria."""
    run = JudgeRunFactory()
    JudgeRun.objects.filter(pk=run.pk).update(created_at=at)
    return [ScoreFactory(run=run, criterion=criterion) for criterion in run.rubric.criteria.all()]


def test_the_migration_leaves_this_months_partition_and_the_next_ones_and_a_default():
    for table in ("qa_score", "outbox_event"):
        names = partitions(table)
        month = this_month()
        for _ in range(MONTHS_AHEAD + 1):
            assert f"{table}_p{month:%Y_%m}" in names, (table, month)
            month = next_month(month)
        assert names[f"{table}_default"] == "DEFAULT"


def test_a_score_and_an_event_land_in_their_months_partition():
    recording = judged_recording()
    score = recording.current_run.scores.first()
    assert score.run_created_at == recording.current_run.created_at
    assert where("qa_score", score.pk) == f"qa_score_p{recording.current_run.created_at.astimezone(UTC):%Y_%m}"
    event = Event.objects.create(name="recording.judged", subject_type="recording", subject_id=recording.pk)
    assert where("outbox_event", event.pk) == f"outbox_event_p{event.created_at.astimezone(UTC):%Y_%m}"
    # A month without a partition of its own: the default one takes it, so an insert never fails.
    far = datetime(2100, 1, 5, tzinfo=UTC)
    assert where("outbox_event", old_event(far).pk) == "outbox_event_default"


def test_the_partition_key_is_the_runs_created_at_and_follows_it():
    [score, *_] = old_run_scores(datetime(2026, 3, 4, 10, tzinfo=UTC))
    assert score.run_created_at == datetime(2026, 3, 4, 10, tzinfo=UTC)  # read from the stored run
    wrong = Score(run=score.run, run_created_at=score.run_created_at - timedelta(days=40), criterion=score.criterion,
                  value=1, confidence=0.5, model_confidence=0.5, verification_status="verified", verifier_version="t")  # fmt: skip
    with pytest.raises(IntegrityError), transaction.atomic():
        Score.objects.bulk_create([wrong])  # another criterion's row would do; the run's month is what is wrong
        constraints_checked()
    # Were a run's created_at rewritten, its scores move with it (ON UPDATE CASCADE), to their new month.
    moved = datetime(2026, 5, 6, tzinfo=UTC)
    partition_create("qa_score", "run_created_at", date(2026, 5, 1))
    JudgeRun.objects.filter(pk=score.run_id).update(created_at=moved)
    score.refresh_from_db()
    assert score.run_created_at == moved and where("qa_score", score.pk) == "qa_score_p2026_05"


def test_ensure_makes_the_months_ahead_and_moves_what_the_default_partition_held_of_one():
    stray = old_event(datetime(2099, 2, 10, tzinfo=UTC))
    assert where("outbox_event", stray.pk) == "outbox_event_default"
    created = partitions_ensure(today=date(2099, 1, 15))
    assert set(created) == {f"{table}_p2099_{month:02}" for table in ("qa_score", "outbox_event") for month in (1, 2, 3)}
    assert where("outbox_event", stray.pk) == "outbox_event_p2099_02"
    assert partitions_ensure(today=date(2099, 1, 15)) == []  # made once


def test_the_reports_and_scorecards_read_only_the_partitions_of_their_period(rubric):
    for back in (1, 2, 3, 4):
        partition_create("qa_score", "run_created_at", months_back(back))
    judged_recording(rubric=rubric)
    date_from = timezone.localdate() - timedelta(days=3)
    recent = ReportFilters(rubric=rubric, date_from=date_from, date_to=timezone.localdate())
    every = ReportFilters(rubric=rubric)
    first = month_start(day_start(date_from).astimezone(UTC))
    wanted = {name for name in partitions("qa_score") if name == "qa_score_default" or date(int(name[-7:-3]), int(name[-2:]), 1) >= first}  # fmt: skip
    older = set(partitions("qa_score")) - wanted
    assert f"qa_score_p{months_back(4):%Y_%m}" in older
    for read in (_judged_scores, _reviewed_scores, _current_scores):
        assert {name for name in scanned(read(recent)) if name.startswith("qa_score")} == wanted, read.__name__
        # Without a first day nothing can be left out: what leaves the older months out is the pruning.
        assert older <= scanned(read(every)), read.__name__


@pytest.fixture
def archive(tmp_path, settings):
    settings.QA_RETENTION_MONTHS = 2
    settings.QA_ARCHIVE_DIR = str(tmp_path)
    return tmp_path


def test_retention_archives_old_months_to_parquet_then_drops_them_with_what_refers_to_them(archive, rubric):
    partitioned, unpartitioned = months_back(4), months_back(6)  # the older month's rows are in the default partition
    partition_create("qa_score", "run_created_at", partitioned)
    partition_create("outbox_event", "created_at", partitioned)
    mid = lambda month: datetime(month.year, month.month, 14, 12, tzinfo=UTC)  # noqa: E731
    old_scores = old_run_scores(mid(partitioned)) + old_run_scores(mid(unpartitioned))
    old_scores[0].__class__.objects.filter(pk=old_scores[0].pk).update(sample_values=[3, 4, {"note": "ñ"}])
    kept = judged_recording(rubric=rubric)
    events = [old_event(mid(partitioned), recording_id=7), old_event(mid(unpartitioned)), old_event(timezone.now())]
    subscription = Subscription.objects.create(workspace_id=default_workspace_id(), url="https://example.com/hook", secret="s")
    deliveries = [Delivery.objects.create(event=event, subscription=subscription, body="{}") for event in events]
    Attempt.objects.create(delivery=deliveries[0], number=1, started_at=timezone.now(), duration_ms=3, outcome="failed")
    coach = UserFactory()
    session = CoachingSession.objects.create(workspace_id=default_workspace_id(), rubric=rubric, agent_id="a", team="t",
                                             coach=coach, goal="g", follow_up_on=date(2027, 1, 1))  # fmt: skip
    coached = CoachingCall.objects.create(session=session, recording=old_scores[0].run.recording, score=old_scores[0])
    kept_call = CoachingCall.objects.create(session=session, recording=kept, score=kept.current_run.scores.first())
    columns = [field.attname for field in Score._meta.concrete_fields]
    before = {
        "qa_score": list(Score.objects.filter(pk__in=[s.pk for s in old_scores]).order_by("pk").values_list(*columns)),
        "outbox_event": list(Event.objects.filter(pk__in=[e.pk for e in events[:2]]).order_by("pk").values_list(
            *(field.attname for field in Event._meta.concrete_fields))),
    }  # fmt: skip
    constraints_checked()  # PostgreSQL detaches no partition with checks pending in the transaction

    done = retention_run()

    # (Any other month before them is an empty partition another test left: archived empty, and dropped.)
    assert {(a.table, a.month) for a in done if a.rows} == {(t, m) for t in ("qa_score", "outbox_event") for m in (partitioned, unpartitioned)}
    assert {a.table: a.rows for a in done if a.month == partitioned} == {"qa_score": 3, "outbox_event": 1}
    for table, rows in before.items():
        read = []
        for month in (partitioned, unpartitioned):
            path = archive_path(archive, table, month)
            assert path.exists() and not path.with_name(path.name + ".partial").exists()
            read += pq.read_table(path).to_pylist()
        model = Score if table == "qa_score" else Event
        fields = model._meta.concrete_fields
        as_stored = [
            tuple(
                json.loads(row[field.column]) if field.get_internal_type() == "JSONField" and row[field.column] is not None
                else uuid.UUID(row[field.column]) if field.get_internal_type() == "UUIDField"
                else row[field.column]
                for field in fields
            )
            for row in read
        ]  # fmt: skip
        key = lambda row: str(row[0])  # noqa: E731
        assert sorted(as_stored, key=key) == sorted(rows, key=key), table
    # Dropped: the partition, the rows, what referred to them (a delivery's attempts with it); the rest kept.
    assert f"qa_score_p{partitioned:%Y_%m}" not in partitions("qa_score")
    assert not Score.objects.filter(pk__in=[s.pk for s in old_scores]).exists()
    assert Score.objects.filter(run=kept.current_run).count() == 3
    assert list(Event.objects.values_list("pk", flat=True)) == [events[2].pk]
    assert list(Delivery.objects.values_list("pk", flat=True)) == [deliveries[2].pk] and not Attempt.objects.exists()
    assert list(CoachingCall.objects.values_list("pk", flat=True)) == [kept_call.pk] != [coached.pk]
    assert retention_run() == []  # nothing left to do
    # A row of an archived month that comes later goes to a second archive: the first is never written over.
    late = old_event(mid(partitioned))
    [again] = retention_run()
    assert again.path == archive_path(archive, "outbox_event", partitioned, copy=2) and again.rows == 1
    assert pq.read_table(again.path).column("id").to_pylist() == [str(late.pk)]
    assert pq.read_table(archive_path(archive, "outbox_event", partitioned)).column("id").to_pylist() == [str(events[0].pk)]


def test_retention_is_off_by_default_and_drops_nothing_without_an_archive_folder(settings, tmp_path):
    assert settings.QA_RETENTION_MONTHS == 0 and retention_run() == []
    settings.QA_RETENTION_MONTHS = 3
    for folder, problem in (("", "QA_ARCHIVE_DIR is not"), ("archive", "absolute"), (str(tmp_path / "none"), "not a folder")):
        settings.QA_ARCHIVE_DIR = folder
        with pytest.raises(ImproperlyConfigured, match=problem):
            retention_run()


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_the_beats_hourly_task_makes_the_partitions_ahead_and_archives_on_a_real_worker(settings, tmp_path):
    from config.celery import app
    from tests.support.workers import celery_worker

    entry = settings.CELERY_BEAT_SCHEDULE["storage-maintain"]
    assert entry["schedule"] == 3600.0
    furthest = this_month()
    for _ in range(MONTHS_AHEAD):
        furthest = next_month(furthest)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE outbox_event_p{furthest:%Y_%m}")
    old = old_event(datetime(months_back(5).year, months_back(5).month, 3, tzinfo=UTC))
    env = {"QA_RETENTION_MONTHS": "2", "QA_ARCHIVE_DIR": str(tmp_path)}
    with celery_worker("--concurrency=1", env=env) as worker:
        app.send_task(entry["task"])  # as the beat sends it
        deadline = time.monotonic() + 60
        while f"outbox_event_p{furthest:%Y_%m}" not in partitions("outbox_event") or Event.objects.filter(pk=old.pk).exists():
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker did not maintain the tables in time"
            time.sleep(0.2)
    assert pq.read_table(archive_path(tmp_path, "outbox_event", months_back(5))).column("id").to_pylist() == [str(old.pk)]


def test_the_storage_pages_commands_run_as_written(settings, tmp_path, capsys):
    section = docs_section("docs/operations/storage.md", "Retention")
    [command, reading] = docs_blocks(section, ("sh", "python"))
    [[*words]] = manage_commands(command.code)
    assert words == ["storage_maintain"]
    variables = dict(re.findall(r"(QA_\w+)=(\S+)", command.code))
    assert set(variables) == {"QA_RETENTION_MONTHS", "QA_ARCHIVE_DIR"}
    settings.QA_RETENTION_MONTHS = int(variables["QA_RETENTION_MONTHS"])
    settings.QA_ARCHIVE_DIR = str(tmp_path)  # the page's folder is the operator's; here, the test's own
    month = months_back(settings.QA_RETENTION_MONTHS + 1)
    partition_create("qa_score", "run_created_at", month)
    old_run_scores(datetime(month.year, month.month, 2, tzinfo=UTC))
    constraints_checked()
    call_command(*words)
    out = capsys.readouterr().out
    assert f"archived 3 rows of qa_score for {month:%Y-%m} to {tmp_path}/qa_score/qa_score_{month:%Y-%m}.parquet" in out
    # The page's reading of an archive, with its path made this test's.
    code = reading.code.replace(variables["QA_ARCHIVE_DIR"], str(tmp_path)).replace("2025-11", f"{month:%Y-%m}")
    found: dict = {}
    exec(code, found)  # noqa: S102 (the page's own example)
    assert found["scores"].num_rows == 3
    assert shlex.split(command.code)[0].startswith("QA_RETENTION_MONTHS=")


@pytest.mark.django_db(transaction=True)
def test_the_migration_partitions_tables_that_hold_rows_and_keeps_every_row():
    from django.db.migrations.executor import MigrationExecutor

    judged_recording()
    judged_recording()
    Event.objects.create(name="recording.judged", subject_type="recording", subject_id=1)
    before = [("qa", "0024_certified_threshold"), ("outbox", "0003_alter_event_name_alter_event_subject_type")]
    score_columns = "id, run_id, criterion_id, value, confidence, evidence, evidence_verified, verification_spans"
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_partitioned_table WHERE partrelid IN ('qa_score'::regclass, 'outbox_event'::regclass)")
            assert cursor.fetchone() == (0,)  # plain tables again, as before
            # Rows written the old way: a run of last June, its scores, and an event of that month.
            cursor.execute(
                "INSERT INTO qa_judgerun (recording_id, rubric_id, backend, model, prompt_version, status, attempts, "
                "created_at, raw_output, error, warm_up, batched) SELECT recording_id, rubric_id, backend, model, "
                "prompt_version, 'succeeded', 1, '2025-06-15T10:00:00Z', '', '', false, false FROM qa_judgerun "
                "ORDER BY id LIMIT 1 RETURNING id"
            )
            (june,) = cursor.fetchone()
            cursor.execute(
                "INSERT INTO qa_score (run_id, criterion_id, value, confidence, model_confidence, evidence, "
                "evidence_verified, verification_status, verification_spans, verifier_version, rationale, unstable) "
                "SELECT %s, criterion_id, value, confidence, model_confidence, evidence, evidence_verified, "
                "verification_status, verification_spans, verifier_version, rationale, unstable FROM qa_score "
                "WHERE run_id = (SELECT min(run_id) FROM qa_score)",
                [june],
            )
            cursor.execute(
                "INSERT INTO outbox_event (id, name, subject_type, subject_id, created_at) "
                "VALUES (%s, 'review.created', 'review', 9, '2025-06-20T00:00:00Z')",
                [uuid.uuid4()],
            )
            cursor.execute(f"SELECT {score_columns} FROM qa_score ORDER BY id")
            scores = cursor.fetchall()
            cursor.execute("SELECT * FROM outbox_event ORDER BY id")
            events = cursor.fetchall()
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    assert len(scores) == 9 and len(events) == 2
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {score_columns} FROM qa_score ORDER BY id")
        assert cursor.fetchall() == scores
        cursor.execute("SELECT * FROM outbox_event ORDER BY id")
        assert cursor.fetchall() == events
        cursor.execute("SELECT count(*) FROM qa_score JOIN qa_judgerun ON qa_judgerun.id = run_id WHERE run_created_at <> qa_judgerun.created_at")
        assert cursor.fetchone() == (0,)
    assert {where("qa_score", row[0]) for row in scores if row[1] == june} == {"qa_score_p2025_06"}
    assert "outbox_event_p2025_06" in partitions("outbox_event")
    # New rows take ids after the copied ones.
    added = judged_recording().current_run.scores.all()
    assert min(score.pk for score in added) > max(row[0] for row in scores)


SQLITE_SCRIPT = """
from datetime import UTC, datetime
import pyarrow.parquet as pq
from django.conf import settings
from core.partitions import archive_path, partitions_ensure, retention_run
from outbox.models import Event
from qa.models import Score
from tests.test_partitions import months_back, old_event, old_run_scores
month = months_back(4)
at = datetime(month.year, month.month, 10, tzinfo=UTC)
scores = old_run_scores(at)
event = old_event(at)
assert partitions_ensure() == []  # plain tables: nothing to make
done = retention_run()
assert sorted((a.table, a.month, a.rows) for a in done) == [("outbox_event", month, 1), ("qa_score", month, 3)], done
assert not Score.objects.exists() and not Event.objects.exists()
archived = pq.read_table(archive_path(__import__("pathlib").Path(settings.QA_ARCHIVE_DIR), "qa_score", month))
assert sorted(archived.column("id").to_pylist()) == sorted(score.pk for score in scores)
print("sqlite retention ok")
"""


def test_on_sqlite_the_tables_stay_plain_and_the_retention_archives_then_deletes(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "archive").mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'first-run.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "PYTHONPATH": str(root),
        "QA_RETENTION_MONTHS": "2",
        "QA_ARCHIVE_DIR": str(tmp_path / "archive"),
    }
    for command in (["migrate", "--verbosity", "0"], ["shell", "-c", SQLITE_SCRIPT]):
        result = subprocess.run(
            [sys.executable, "manage.py", *command], cwd=root, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert "sqlite retention ok" in result.stdout
