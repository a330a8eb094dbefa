"""The bulk export: documented columns, the judge's values that exist only, scope, Parquet, the cursor's
exactly-once promise while other transactions commit rows out of id order, the command, and the docs.

The tests commit for real (transaction=True): the export sends only rows whose transaction has finished
before the oldest one still running, so rows of a test's own open transaction would never appear.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections, transaction
from django.test import Client
from django.utils import timezone

from access.models import ApiKey, Role
from access.services import member_add, workspace_create
from disputes.models import Dispute, DisputedCriterion
from exports.columns import KINDS
from exports.selectors import Cursor, export_page, export_watermark, page_records
from access.scope import EVERYTHING
from qa.models import UNVERIFIED_MARK, Score
from reviews.models import AgreedValue, CalibrationCall, CalibrationSession, ReviewVoid
from reviews.services import review_create
from tests.api.conftest import key_client, new_key
from tests.factories import RecordingFactory, JudgeRunFactory, ScoreFactory, judged_recording, published_rubric
from tests.support.docs import ROOT, docs_blocks, docs_section, manage_commands

pytestmark = pytest.mark.django_db(transaction=True)

NDJSON = "application/x-ndjson"
PARQUET = "application/vnd.apache.parquet"


def settle(timeout: float = 60) -> None:
    """Wait until every transaction this test committed is below the export's watermark: the oldest
    transaction running in this database (the suite's other workers, each in a database of its own, and
    anyone else's tests on this server do not hold it back)."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_xact_id()::text::bigint")  # a transaction of its own, after ours
        [mark] = cursor.fetchone()
    deadline = time.monotonic() + timeout
    while export_watermark().below <= mark:
        assert time.monotonic() < deadline, "a transaction stayed open on the server for minutes"
        time.sleep(0.2)


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def rows_of(response) -> list[dict]:
    assert response.status_code == 200, body(response)
    return [json.loads(line) for line in body(response).decode().splitlines()]


def export_all(client, kind: str, *, limit: int = 10_000, cursor: str = "") -> tuple[list[dict], str]:
    """Every page from `cursor` until X-Export-More says false: the rows, and the last cursor."""
    rows = []
    while True:
        response = client.get(f"/api/export/{kind}/", {"since_cursor": cursor, "limit": limit})
        rows += rows_of(response)
        cursor = response["X-Export-Cursor"]
        if response["X-Export-More"] == "false":
            return rows, cursor


@pytest.fixture
def bi():
    return key_client(new_key("bi", all_sources=True, can_export=True)[1])


def test_scores_have_the_documented_columns_and_an_unverified_value_is_null_and_marked(bi):
    rubric = published_rubric(criteria=3)
    recording = judged_recording(rubric=rubric, values={"c1": 5, "c2": 2, "c3": 4})
    scores = {score.criterion.key: score for score in Score.objects.filter(run__recording=recording).select_related("criterion")}
    # c2: the model said 2 but its quote is not in the transcript; c3: a verified "does not apply".
    Score.objects.filter(pk=scores["c2"].pk).update(evidence_verified=False, confidence=0, verification_status="not_found")
    Score.objects.filter(pk=scores["c3"].pk).update(value=None)
    settle()

    response = bi.get("/api/export/scores/")

    assert response["Content-Type"] == NDJSON
    rows = {row["criterion"]: row for row in rows_of(response)}
    assert all(list(row) == [column.name for column in KINDS["scores"]] for row in rows.values())
    assert (rows["c1"]["value"], rows["c1"]["verified"], rows["c1"]["unverified_mark"]) == (5, True, "")
    assert (rows["c2"]["value"], rows["c2"]["not_applicable"], rows["c2"]["verified"]) == (None, None, False)
    assert rows["c2"]["unverified_mark"] == UNVERIFIED_MARK and rows["c2"]["confidence"] == 0
    assert (rows["c3"]["value"], rows["c3"]["not_applicable"], rows["c3"]["verified"]) == (None, True, True)
    assert rows["c1"]["external_id"] == recording.external_id and rows["c1"]["rubric"] == rubric.slug
    assert "2" not in json.dumps([row["value"] for row in rows.values()])  # the model's 2 is nowhere
    # Nothing new: the next page from its cursor is empty.
    again = bi.get("/api/export/scores/", {"since_cursor": response["X-Export-Cursor"]})
    assert rows_of(again) == [] and again["X-Export-More"] == "false"


def test_parquet_is_readable_by_pyarrow_with_the_documented_columns_by_parameter_or_accept(bi):
    rubric = published_rubric(criteria=2)
    recording = judged_recording(rubric=rubric)
    Score.objects.filter(run__recording=recording, criterion__key="c1").update(evidence_verified=False, confidence=0)
    schema = {column.name: column.type for column in KINDS["scores"]}
    settle()
    types = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "text": pa.string(),
             "timestamp": pa.timestamp("us", tz="UTC")}  # fmt: skip

    by_parameter = bi.get("/api/export/scores/", {"format": "parquet"})
    by_accept = bi.get("/api/export/scores/", HTTP_ACCEPT=PARQUET)

    for response in (by_parameter, by_accept):
        assert response.status_code == 200 and response["Content-Type"] == PARQUET
        table = pq.read_table(io.BytesIO(body(response)))
        assert table.schema.names == list(schema)
        assert [table.schema.field(name).type for name in schema] == [types[kind] for kind in schema.values()]
        rows = {row["criterion"]: row for row in table.to_pylist()}
        assert rows["c1"]["value"] is None and rows["c1"]["unverified_mark"] == UNVERIFIED_MARK
        assert rows["c2"]["value"] == 4 and rows["c2"]["verified"] is True
    # Every kind, even with no rows, is a Parquet file with its columns.
    for kind, columns in KINDS.items():
        empty = bi.get(f"/api/export/{kind}/", {"format": "parquet", "since_cursor": by_parameter["X-Export-Cursor"]})
        assert pq.read_table(io.BytesIO(body(empty))).schema.names == [column.name for column in columns]


def test_bad_input_is_a_400_naming_it_and_a_key_without_the_flag_is_refused(bi):
    assert bi.get("/api/export/scores/", {"since_cursor": "12"}).json().keys() == {"since_cursor"}
    assert bi.get("/api/export/scores/", {"limit": "0"}).json().keys() == {"limit"}
    response = bi.get("/api/export/scores/", {"format": "xml"})
    assert response.status_code == 400 and response.json() == {"format": "Give ndjson or parquet."}
    # A cursor ahead of the database (a restore into a new server restarts its transaction ids).
    assert bi.get("/api/export/scores/", {"since_cursor": f"{2**60}-1"}).json().keys() == {"since_cursor"}
    plain = key_client(new_key("crm", all_sources=True)[1])
    assert plain.get("/api/export/scores/").status_code == 403
    assert Client().get("/api/export/scores/").status_code == 401


def test_scope_another_workspace_never_and_a_source_bound_key_its_source_only(role_groups):
    alpha, beta = workspace_create(slug="alpha", name="Alpha"), workspace_create(slug="beta", name="Beta")
    alpha_rubric, beta_rubric = published_rubric(workspace=alpha), published_rubric(workspace=beta)
    crm = judged_recording(rubric=alpha_rubric, source="crm", team="north", external_id="alpha-crm")
    other = judged_recording(rubric=alpha_rubric, source="dialer", team="south", external_id="alpha-dialer")
    theirs = judged_recording(rubric=beta_rubric, source="crm", team="north", external_id="beta-crm")
    for recording in (crm, other, theirs):
        review_create(recording=recording, decision="approve", reviewer="sup")
    alpha_key = key_client(new_key("alpha-bi", workspace=alpha, all_sources=True, can_export=True)[1])
    crm_key = key_client(new_key("alpha-crm-bi", workspace=alpha, source="crm", can_export=True)[1])
    beta_key = key_client(new_key("beta-bi", workspace=beta, all_sources=True, can_export=True)[1])
    supervisor = User.objects.create_user("north-sup", password="pass-word-123")
    member_add(user=supervisor, workspace=alpha, role=Role.SUPERVISOR, teams=["north"])
    agent = User.objects.create_user("agent", password="pass-word-123")
    member_add(user=agent, workspace=alpha, role=Role.AGENT, agent_id="agent-1")
    settle()
    person, agent_client = Client(), Client()
    person.force_login(supervisor)
    agent_client.force_login(agent)

    for kind in ("scores", "reviews"):
        calls = {client: {row["external_id"] for row in export_all(client, kind)[0]} for client in (alpha_key, crm_key, beta_key, person)}
        assert calls[alpha_key] == {"alpha-crm", "alpha-dialer"}
        assert calls[crm_key] == {"alpha-crm"}
        assert calls[beta_key] == {"beta-crm"}
        assert calls[person] == {"alpha-crm"}  # their team's calls (north)
    assert agent_client.get("/api/export/scores/").status_code == 403  # no reports capability


def test_reviews_disputes_and_calibration_and_a_changed_row_comes_again(bi):
    rubric = published_rubric(criteria=2)
    recording = judged_recording(rubric=rubric)
    review = review_create(recording=recording, decision="approve", reviewer="ana")
    lead = User.objects.create_user("lead")
    dispute = Dispute.objects.create(
        review=review, recording=recording, agent_id=recording.agent_id, opened_by=lead, due_at=timezone.now()
    )
    DisputedCriterion.objects.create(dispute=dispute, criterion=rubric.criteria.get(key="c1"), proposed_value=1, reason="no")
    session = CalibrationSession.objects.create(
        name="March", rubric=rubric, lead=lead, status=CalibrationSession.Status.CLOSED, closed_at=timezone.now()
    )
    session.participants.set([lead])
    call = CalibrationCall.objects.create(session=session, recording=recording, run=recording.current_run)
    Score.objects.filter(run=recording.current_run, criterion__key="c2").update(evidence_verified=False, confidence=0)
    for key, value in (("c1", 3), ("c2", 5)):
        AgreedValue.objects.create(call=call, criterion=rubric.criteria.get(key=key), value=value, agreed_by=lead)
    settle()

    [review_row], review_cursor = export_all(bi, "reviews")
    [dispute_row], dispute_cursor = export_all(bi, "disputes")
    calibration, _ = export_all(bi, "calibration")

    assert review_row["id"] == review.pk and review_row["decision"] == "approve" and review_row["undone"] is False
    assert json.loads(review_row["human_values"]) == {"c1": 4, "c2": 4}
    assert (dispute_row["status"], dispute_row["criteria_disputed"], dispute_row["criteria_upheld"]) == ("open", 1, 0)
    assert json.loads(dispute_row["criteria"]) == [{
        "key": "c1", "proposed_value": 1, "proposed_not_applicable": False, "outcome": "pending",
        "resolved_value": None, "resolved_not_applicable": False,
    }]  # fmt: skip
    agreed = {row["criterion"]: row for row in calibration}
    assert (agreed["c1"]["agreed_value"], agreed["c1"]["judge_value"], agreed["c1"]["judge_verified"]) == (3, 4, True)
    assert (agreed["c2"]["judge_value"], agreed["c2"]["judge_unverified_mark"]) == (None, UNVERIFIED_MARK)
    assert agreed["c1"]["participants"] == 1 and agreed["c1"]["session_name"] == "March"
    assert [list(row) for row in calibration] == [[column.name for column in KINDS["calibration"]]] * 2

    # The lead upholds the criterion: the dispute comes again, resolved; the review, untouched, does not.
    DisputedCriterion.objects.filter(dispute=dispute).update(outcome="upheld", resolved_value=1)
    Dispute.objects.filter(pk=dispute.pk).update(status="resolved", resolved_at=timezone.now())
    settle()
    [again], _ = export_all(bi, "disputes", cursor=dispute_cursor)
    assert (again["id"], again["status"], again["criteria_upheld"]) == (dispute.pk, "resolved", 1)
    assert export_all(bi, "reviews", cursor=review_cursor)[0] == []
    # Its supervisor undoes the review: it comes again, marked.
    ReviewVoid.objects.create(review=review, user=lead)
    settle()
    [undone], _ = export_all(bi, "reviews", cursor=review_cursor)
    assert (undone["id"], undone["undone"]) == (review.pk, True)


def test_a_person_gets_no_judge_values_of_a_call_blind_to_them(bi, role_groups):
    rubric = published_rubric(criteria=2)
    open_call, other = judged_recording(rubric=rubric), judged_recording(rubric=rubric)
    supervisor = User.objects.create_user("sup", password="pass-word-123")
    member_add(user=supervisor, workspace=rubric.workspace, role=Role.SUPERVISOR)
    session = CalibrationSession.objects.create(name="Open", rubric=rubric, lead=supervisor)
    session.participants.set([supervisor])
    CalibrationCall.objects.create(session=session, recording=open_call, run=open_call.current_run)
    settle()
    person = Client()
    person.force_login(supervisor)

    assert {row["recording_id"] for row in export_all(person, "scores")[0]} == {other.pk}
    assert {row["recording_id"] for row in export_all(bi, "scores")[0]} == {open_call.pk, other.pk}  # keys are never blind


def _judged_in_own_transaction(rubric, name: str, *, hold: threading.Event | None = None,
                               inserted: threading.Event | None = None, ids: list[int] | None = None) -> list[int]:  # fmt: skip
    """A judged call with its scores, written and committed by this thread's own connection; with `hold`,
    the transaction stays open (its rows inserted, their ids in `ids`) until it is set."""
    ids = [] if ids is None else ids
    try:
        with transaction.atomic():
            recording = RecordingFactory(rubric=rubric, external_id=name, content_hash=f"{abs(hash(name)):064x}"[:64])
            run = JudgeRunFactory(recording=recording)
            ids += [ScoreFactory(run=run, criterion=criterion).pk for criterion in rubric.criteria.all()]
            if inserted is not None:
                inserted.set()
            if hold is not None:
                assert hold.wait(60)
            else:
                time.sleep(random.uniform(0, 0.05))  # commits land in another order than the ids
        return ids
    finally:
        connections.close_all()


def test_every_row_exactly_once_across_resumed_pages_while_rows_commit_out_of_id_order(bi):
    rubric = published_rubric(criteria=3)
    random.seed(44)
    # 1. The hazard, made certain: a transaction takes score ids, then another commits higher ids first.
    late_ids: list[int] = []
    hold, inserted = threading.Event(), threading.Event()
    late = threading.Thread(
        target=_judged_in_own_transaction, args=(rubric, "late"), kwargs={"hold": hold, "inserted": inserted, "ids": late_ids}
    )
    late.start()
    try:
        assert inserted.wait(30)
        early_ids = _judged_in_own_transaction(rubric, "early")
        # A reader going by `id > last` now sees the higher ids and would move past the late ones for ever.
        visible = set(Score.objects.values_list("pk", flat=True))
        assert set(early_ids) <= visible and min(early_ids) > max(late_ids) and not set(late_ids) & visible
        first, cursor = export_all(bi, "scores", limit=2)  # whatever the watermark lets through now
        assert not {row["id"] for row in first} & set(late_ids)  # held back, with all after it
        assert not {row["id"] for row in first} & set(early_ids)
    finally:
        hold.set()
        late.join()

    # 2. Many writers committing in random order while the reader resumes page after page.
    written: list[int] = []
    stop = threading.Event()

    def writer(number: int) -> None:
        for index in range(6):
            written.extend(_judged_in_own_transaction(rubric, f"w{number}-{index}"))

    writers = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in writers:
        thread.start()
    seen = [row["id"] for row in first]
    pages = 1
    while any(thread.is_alive() for thread in writers) or not stop.is_set():
        if not any(thread.is_alive() for thread in writers):
            stop.set()  # one more round once every writer has committed
        response = bi.get("/api/export/scores/", {"since_cursor": cursor, "limit": 4})
        seen += [row["id"] for row in rows_of(response)]
        cursor, pages = response["X-Export-Cursor"], pages + 1
    settle()  # a transaction still closing in this database holds the watermark back: the rest waits, then comes
    rows, cursor = export_all(bi, "scores", limit=4, cursor=cursor)
    seen += [row["id"] for row in rows]
    expected = set(Score.objects.values_list("pk", flat=True))

    assert len(expected) == 3 * (2 + 4 * 6)
    assert set(written) | set(late_ids) | set(early_ids) == expected
    assert Counter(seen) == Counter({pk: 1 for pk in expected})
    assert pages > 3


def _open_transaction(database: str):
    """A connection of its own to `database` on the test server, in a transaction that has taken an id
    (and written nothing); the id."""
    import psycopg

    settings_dict = connections["default"].settings_dict
    connection = psycopg.connect(
        dbname=database, user=settings_dict["USER"], password=settings_dict["PASSWORD"] or None,
        host=settings_dict["HOST"] or "127.0.0.1", port=settings_dict["PORT"] or 5432,
    )  # fmt: skip
    [[xid]] = connection.execute("SELECT pg_current_xact_id()::text::bigint").fetchall()
    return connection, xid


def test_a_transaction_open_in_another_database_does_not_hold_the_watermark_back_one_in_this_one_does(bi):
    rubric = published_rubric(criteria=2)
    elsewhere, other_xid = _open_transaction("postgres")  # another database on the same server
    try:
        ids = _judged_in_own_transaction(rubric, "after-the-other")  # committed after the other one began
        watermark = export_watermark()
        assert other_xid < watermark.below  # not waited for: it cannot write here
        assert {row["id"] for row in export_all(bi, "scores")[0]} == set(ids)
        here, own_xid = _open_transaction(connections["default"].settings_dict["NAME"])
        try:
            later = _judged_in_own_transaction(rubric, "after-this-one")
            assert export_watermark().below == own_xid  # this database's open transaction holds it
            page = export_page(kind="scores", scope=EVERYTHING, since=Cursor())
            assert {row["id"] for row in page_records(page)} == set(ids)  # the later rows wait...
        finally:
            here.rollback()
            here.close()
        assert {row["id"] for row in page_records(export_page(kind="scores", scope=EVERYTHING, since=page.cursor))} == set(later)
    finally:  # ...and come, once, when it ends
        elsewhere.rollback()
        elsewhere.close()
    # The reader's own transaction, which its snapshot does not list, holds the watermark too.
    with transaction.atomic():
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_current_xact_id()::text::bigint")
            [[own_xid]] = cursor.fetchall()
        writer = threading.Thread(target=_judged_in_own_transaction, args=(rubric, "after-the-reader"))
        writer.start()
        writer.join()  # a later transaction has finished: the snapshot's next id is past the reader's
        assert export_watermark().below == own_xid


def test_the_command_writes_files_and_resumes_from_its_cursor_file(tmp_path):
    rubric = published_rubric(criteria=2)
    first = [judged_recording(rubric=rubric) for _ in range(3)]
    settle()
    out = io.StringIO()
    call_command("export", "--to", str(tmp_path), "--kind", "scores", "--limit", "4", stdout=out)
    assert "scores: 6 rows in 2 files" in out.getvalue()
    judged_recording(rubric=rubric)
    settle()
    call_command("export", "--to", str(tmp_path), "--kind", "scores", "--format", "parquet", stdout=out)
    assert "scores: 2 rows in 1 files" in out.getvalue()

    files = sorted((tmp_path / "scores").iterdir())
    ids = []
    for path in files:
        if path.suffix == ".parquet":
            ids += pq.read_table(path).column("id").to_pylist()
        else:
            ids += [json.loads(line)["id"] for line in path.read_text().splitlines()]
    assert sorted(ids) == sorted(Score.objects.values_list("pk", flat=True)) and len(ids) == 8
    assert {score.run.recording_id for score in Score.objects.filter(pk__in=ids)} >= {r.pk for r in first}
    assert re.fullmatch(r"\d+-\d+\n", (tmp_path / "scores.cursor").read_text())
    assert not list(tmp_path.rglob("*.part")) and not list(tmp_path.rglob("*.tmp"))
    # A cursor file that holds no cursor stops it with the reason.
    (tmp_path / "scores.cursor").write_text("garbage")
    with pytest.raises(Exception, match="does not hold a cursor"):
        call_command("export", "--to", str(tmp_path), "--kind", "scores")


def test_a_page_read_in_code_gives_the_same_rows_as_the_api(bi):
    judged_recording(rubric=published_rubric(criteria=2))
    settle()
    page = export_page(kind="scores", scope=EVERYTHING, since=Cursor())
    assert [row["id"] for row in page_records(page)] == [row["id"] for row in rows_of(bi.get("/api/export/scores/"))]


# The docs.

PAGE = "docs/api/export.md"


def test_the_documented_columns_are_the_code_s():
    for kind, columns in KINDS.items():
        section = docs_section(PAGE, kind)
        documented = re.findall(r"^\| `(\w+)` \| (\w+) \| (.+) \|$", section, re.M)
        assert documented == [(column.name, column.type, column.meaning) for column in columns]


def test_the_documented_key_nightly_load_duckdb_and_command_run_as_written(live_server, tmp_path):
    import duckdb  # noqa: F401  (the docs' example imports it)

    acme = workspace_create(slug="acme", name="ACME")
    [create] = docs_blocks(docs_section(PAGE, "Who may export"))
    out = io.StringIO()
    for argv in manage_commands(create.code):
        call_command(*argv, stdout=out, stderr=io.StringIO())
    key = out.getvalue().strip()
    assert ApiKey.objects.get(name="acme-bi").can_export
    rubric = published_rubric(criteria=2, workspace=acme)
    recording = judged_recording(rubric=rubric, values={"c1": 5, "c2": 3})
    Score.objects.filter(run__recording=recording, criterion__key="c2").update(evidence_verified=False, confidence=0)

    [load] = docs_blocks(docs_section(PAGE, "A nightly load"))
    [duck] = docs_blocks(docs_section(PAGE, "A nightly load"), "python")

    def nightly() -> str:
        settle()
        subprocess.run(load.code.replace("http://localhost:8000", live_server.url), shell=True, cwd=tmp_path, check=True,
                       env={**os.environ, "KEY": key, "NO_PROXY": "*"}, timeout=60)  # fmt: skip
        result = subprocess.run([os.sys.executable, "-c", duck.code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout

    shown = nightly()
    assert re.search(r"c1\s*│\s*1\s*│\s*1\s*│\s*5\.0\s*│\s*0", shown), shown
    assert re.search(r"c2\s*│\s*1\s*│\s*0\s*│\s*NULL\s*│\s*1", shown), shown
    cursor = (tmp_path / "scores.cursor").read_text().strip()
    assert re.fullmatch(r"\d+-\d+", cursor)
    # The next night: a new call, and c2 of the first verified again (sent again, replaced, not doubled).
    judged_recording(rubric=rubric, values={"c1": 3, "c2": 1})
    Score.objects.filter(run__recording=recording, criterion__key="c2").update(evidence_verified=True, confidence=0.9)
    shown = nightly()
    assert re.search(r"c1\s*│\s*2\s*│\s*2\s*│\s*4\.0\s*│\s*0", shown), shown
    assert re.search(r"c2\s*│\s*2\s*│\s*2\s*│\s*2\.0\s*│\s*0", shown), shown

    [command] = docs_blocks(docs_section(PAGE, "As files: `manage.py export`"))
    settle()
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        for argv in manage_commands(command.code):
            call_command(*argv, stdout=io.StringIO())
    finally:
        os.chdir(cwd)
    files = list((tmp_path / "bi-export" / "scores").iterdir())
    assert sum(pq.read_table(path).num_rows for path in files if path.suffix == ".parquet") == 4
    assert (tmp_path / "bi-export" / "calibration.cursor").exists()
    assert ROOT.joinpath(PAGE).exists()
