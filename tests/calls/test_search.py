"""The calls list's search and filters: PostgreSQL's full-text search in each call's language, the
filters, and blindness (a filter on the judge's value never shows whom the judge gave it)."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from qa.models import Recording
from qa.search import headlines, matches_first, recordings_matching
from calls.selectors import COUNT_LIMIT, CallFilters, call_page, call_search, calls_visible
from tests.calls.conftest import ENGLISH, at, call, queued_call
from tests.factories import RecordingFactory, UserFactory
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db


def found(user, **filters) -> list[str]:
    recordings = call_search(recordings=calls_visible(user), filters=CallFilters(**filters), user=user)
    return list(recordings.values_list("external_id", flat=True))


def listed(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-recording="(\d+)">', response.content.decode())]


def test_words_are_found_in_each_calls_own_language(calls, supervisor):
    assert found(supervisor, words="facturas") == ["es-1"]  # Spanish stems: facturas -> factur
    assert found(supervisor, words="refunds") == ["en-1"]  # English stems: refunds -> refund
    assert found(supervisor, words="charging") == ["en-1"]
    assert found(supervisor, words="reembolso") == ["pt-1"]  # neither: the simple configuration
    assert found(supervisor, words="FACTURA octubre") == ["es-1"]  # every word, any case
    assert found(supervisor, words="factura refund") == []
    assert found(supervisor, words="factura or refund") == ["en-1", "es-1"]  # latest first
    assert found(supervisor, words='"charged twice"') == ["en-1"]
    assert found(supervisor, words='"twice charged"') == []  # a phrase keeps its order
    assert found(supervisor, words="refund -charges") == []  # read in English only: charges -> charg
    assert found(supervisor, words="refund -facturas") == ["en-1"]
    assert found(supervisor, words="twice") == ["en-1"]
    assert found(supervisor, words="la") == []  # a Spanish stop word, in a Spanish call: nothing to find


def test_the_search_uses_the_gin_index(calls):
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            plan = recordings_matching(Recording.objects.all(), "factura").explain()
        finally:
            cursor.execute("SET enable_seqscan = on")
    assert {"qa_recording_search_spanish", "qa_recording_search_english", "qa_recording_search_other"} <= set(re.findall(r"qa_recording_search_\w+", plan))


def test_an_edited_transcript_is_searched_as_it_is_now(calls, supervisor):
    Recording.objects.filter(pk=calls["es"].pk).update(transcript="AGENTE: Le devuelvo el importe.\n")
    assert found(supervisor, words="factura") == []
    assert found(supervisor, words="importe") == ["es-1"]


def test_headlines_mark_the_words_found_and_escape_the_rest(calls):
    marked = headlines(Recording.objects.all(), "reembolso or facturas or refund")
    assert "<mark>factura</mark>" in marked[calls["es"].pk]
    assert "<mark>refund</mark>" in marked[calls["en"].pk]
    portuguese = marked[calls["pt"].pk]
    assert "<mark>reembolso</mark>" in portuguese
    # No markup but the marks: PostgreSQL drops what reads as a tag, and the rest is escaped.
    assert "<" not in re.sub("</?mark>", "", portuguese)
    assert "5 &lt; 6 &amp; 7" in portuguese


def test_filters(calls, supervisor):
    rubric = calls["es"].rubric
    queued_call(rubric, "q-1", occurred_at=at(6), reasons=[Recording.ReviewReason.UNVERIFIED_EVIDENCE])
    RecordingFactory(rubric=rubric, external_id="not-judged", status=Recording.Status.RECEIVED)
    assert found(supervisor) == ["q-1", "pt-1", "en-1", "es-1"]  # judged calls only, latest first
    assert found(supervisor, team="south") == ["en-1"]
    assert found(supervisor, agent="joh") == []  # the agent id, exactly (docs/dev/design.md, "Call filters")
    assert found(supervisor, agent="a2") == ["en-1"]
    assert found(supervisor, date_from=at(4).date(), date_to=at(5).date()) == ["pt-1", "en-1"]
    assert found(supervisor, status=Recording.Status.IN_REVIEW) == ["q-1"]
    assert found(supervisor, reason=Recording.ReviewReason.UNVERIFIED_EVIDENCE) == ["q-1"]
    assert found(supervisor, rubric="care", words="factura", team="north") == ["q-1", "es-1"]
    assert found(supervisor, rubric="other") == []


def test_a_criterion_value_counts_only_where_its_quote_verified(calls, supervisor):
    es, en = calls["es"], calls["en"]
    es.current_run.scores.filter(criterion__key="c1").update(value=2, evidence_verified=True)
    en.current_run.scores.filter(criterion__key="c1").update(value=2, evidence_verified=False)
    calls["pt"].current_run.scores.filter(criterion__key="c1").update(value=None, evidence_verified=True)
    assert found(supervisor, criterion="c1", value="2") == ["es-1"]
    assert found(supervisor, criterion="c1", value="na") == ["pt-1"]


def test_a_blind_call_is_listed_but_never_found_by_the_judges_value(calls, supervisor):
    rubric = calls["es"].rubric
    audit = queued_call(rubric, "audit-1", reasons=[Recording.ReviewReason.RANDOM_AUDIT])
    audit.current_run.scores.filter(criterion__key="c1").update(value=2, evidence_verified=True)
    assert "audit-1" in found(supervisor)
    assert found(supervisor, criterion="c1", value="2") == []
    # Nor by its absence: the other values leave it out too.
    assert "audit-1" not in found(supervisor, criterion="c1", value="4")
    # A rubric owner who does not review is not blind to it.
    owner = UserFactory(groups=["Rubric owners"])
    assert found(owner, criterion="c1", value="2") == ["audit-1"]


def test_the_page_lists_and_marks(calls, supervisor):
    client = client_for(supervisor)
    response = client.get("/calls/", {"q": "factura"})
    assert response.status_code == 200
    assert listed(response) == [calls["es"].pk]
    assert "<mark>factura</mark>" in response.content.decode()
    assert "1 call found" in response.content.decode()
    assert 'id="assign-form"' not in response.content.decode()  # a supervisor does not assign
    assert "no full-text search" not in response.content.decode()  # PostgreSQL has it


def test_the_page_in_spanish(calls, supervisor):
    response = client_for(supervisor, "es").get("/calls/", {"q": "refund"})
    assert "1 llamada encontrada" in response.content.decode()
    assert "Palabras dichas" in response.content.decode()


def test_a_bad_filter_is_a_400_naming_it(calls, supervisor):
    client = client_for(supervisor)
    response = client.get("/calls/", {"value": "x", "criterion": "c1"})
    assert response.status_code == 400
    assert "Give a number, or na." in response.content.decode()
    response = client.get("/calls/", {"value": "2"})
    assert response.status_code == 400
    assert "Choose the criterion whose value you filter by." in response.content.decode()
    assert client.get("/calls/", {"status": "bogus"}).status_code == 400


def test_who_may_open_the_list(calls, client):
    assert client.get("/calls/")["Location"] == "/accounts/login/?next=/calls/"
    outsider = UserFactory()
    assert client_for(outsider).get("/calls/").status_code == 403
    agent = UserFactory(groups=["Agents"])
    assert client_for(agent).get("/calls/").status_code == 403  # an agent sees their own calls elsewhere


def test_a_page_costs_the_same_queries_whatever_its_size(calls, supervisor, django_assert_max_num_queries):
    rubric = calls["es"].rubric
    for index in range(12):
        queued_call(rubric, f"more-{index}")
    recordings = call_search(recordings=calls_visible(supervisor), filters=CallFilters(words="factura"), user=supervisor)
    # Five, and the count's planner settings (qa.search.matches_first): one, and here, inside the test's
    # transaction, a savepoint's three (made, rolled back to, released).
    with django_assert_max_num_queries(9):
        page = call_page(recordings=recordings, filters=CallFilters(words="factura"), number=1, size=50)
    assert len(page.rows) == 13
    assert all("<mark>" in row.headline for row in page.rows)


def test_words_a_date_range_and_a_judges_value_together(calls, supervisor, monkeypatch):
    """The count starts from the words' matches (qa.search.matches_first) and asks the other filters of
    each: every filter must still hold of every call counted and listed."""
    rubric = calls["es"].rubric
    no_refund = "AGENT: Good afternoon.\nCUSTOMER: My router keeps restarting.\n"

    def english(external_id: str, day: int, value: int = 2, transcript: str = ENGLISH, **fields):
        recording = call(rubric, external_id, transcript, "en", occurred_at=at(day), **fields)
        recording.current_run.scores.filter(criterion__key="c1").update(value=value, evidence_verified=True)
        return recording

    english("hit-1", 10)
    english("hit-2", 12)
    english("hit-3", 20)  # the last day of the range
    english("too-early", 9)
    english("too-late", 21)
    english("other-value", 11, value=3)
    english("no-words", 11, transcript=no_refund)
    unverified = english("unverified", 11)
    unverified.current_run.scores.filter(criterion__key="c1").update(evidence_verified=False)
    audit = queued_call(rubric, "audit", ENGLISH, "en", occurred_at=at(11), reasons=[Recording.ReviewReason.RANDOM_AUDIT])
    audit.current_run.scores.filter(criterion__key="c1").update(value=2, evidence_verified=True)  # blind to a reviewer
    filters = CallFilters(words="refunds", date_from=at(10).date(), date_to=at(20).date(), criterion="c1", value="2")

    def page() -> tuple[int, bool, list[str]]:
        recordings = call_search(recordings=calls_visible(supervisor), filters=filters, user=supervisor)
        listed = call_page(recordings=recordings, filters=filters, number=1, size=50)
        return listed.count, listed.capped, [row.recording.external_id for row in listed.rows]

    assert page() == (3, False, ["hit-3", "hit-2", "hit-1"])
    monkeypatch.setattr("calls.selectors.COUNT_LIMIT", 2)  # the capped count, on the same filters
    assert page() == (2, True, ["hit-3", "hit-2"])  # the pages are of the calls counted
    assert found(UserFactory(groups=["Rubric owners"]), **vars(filters)) == ["hit-3", "hit-2", "audit", "hit-1"]


def test_the_count_reads_no_walk_of_the_calls_and_leaves_the_settings_as_they_were(calls, supervisor):
    """Within qa.search.matches_first PostgreSQL reads the calls from bitmaps only, never walking the
    table or a b-tree index and testing each call's vector: of the bitmaps it prices cheapest, the words'
    GIN matches on the benchmark's 100,000 calls (bench/search/README.md); here, on four, whichever."""
    walk = re.compile(r"(Seq Scan|Index Scan using \w+) on qa_recording ")

    def count_plan(filters: CallFilters) -> str:
        recordings = call_search(recordings=calls_visible(supervisor), filters=filters, user=supervisor)
        with matches_first():
            return recordings.order_by()[:COUNT_LIMIT].explain()

    # Without it, the plan for four calls depends on the table's statistics (after the suite's other tests
    # it may already read bitmaps), so only what it forces is asserted.
    together = CallFilters(words="refund", date_from=at(1).date(), criterion="c1", value="4")
    for filters in (CallFilters(words="refund"), together):
        plan = count_plan(filters)
        assert not walk.search(plan) and "Bitmap Heap Scan on qa_recording " in plan, plan
    recordings = call_search(recordings=calls_visible(supervisor), filters=together, user=supervisor)
    page = call_page(recordings=recordings, filters=together, number=1, size=50)
    assert (page.count, [row.recording.external_id for row in page.rows]) == (1, ["en-1"])
    with connection.cursor() as cursor:  # back as they were for the rest of the transaction: the rows' query too
        cursor.execute("SELECT current_setting('enable_seqscan'), current_setting('enable_indexscan'), current_setting('jit')")
        assert cursor.fetchone() == ("on", "on", "on")


def test_a_search_counts_to_a_thousand(calls, supervisor, monkeypatch):
    monkeypatch.setattr("calls.selectors.COUNT_LIMIT", 2)
    recordings = call_search(recordings=calls_visible(supervisor), filters=CallFilters(), user=supervisor)
    page = call_page(recordings=recordings, filters=CallFilters(), number=1, size=50)
    assert (page.count, page.capped, len(page.rows)) == (2, True, 2)
    assert "2 calls or more found: narrow the search to count them" in client_for(supervisor).get("/calls/").content.decode()


def test_a_call_stored_before_the_column_is_searched_and_a_changed_language_read_again(calls, supervisor):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE qa_recording SET search_vector = NULL WHERE id = %s", [calls["en"].pk])
    assert found(supervisor, words="refund") == []  # what migration qa 0016's backfill is for
    Recording.objects.filter(pk=calls["en"].pk).update(language="en-GB")
    assert found(supervisor, words="refunds") == ["en-1"]
    # Read as Spanish now: the English stemmer's "refund" is no longer what "refunds" becomes.
    Recording.objects.filter(pk=calls["en"].pk).update(language="es")
    assert found(supervisor, words="refunds") == []
    assert found(supervisor, words="refund") == ["en-1"]


def test_a_status_update_leaves_the_column_alone(calls):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE qa_recording SET search_vector = NULL WHERE id = %s", [calls["es"].pk])
    Recording.objects.filter(pk=calls["es"].pk).update(status=Recording.Status.IN_REVIEW, needs_review=True)
    calls["es"].refresh_from_db()
    calls["es"].save()  # every column written, the transcript unchanged
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_vector IS NULL FROM qa_recording WHERE id = %s", [calls["es"].pk])
        assert cursor.fetchone() == (True,)


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_column_for_the_calls_already_stored(supervisor):
    from django.db.migrations.executor import MigrationExecutor

    from tests.factories import published_rubric

    rubric = published_rubric()
    before = [("qa", "0015_recording_quality_score")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        OldRecording = executor.loader.project_state(before).apps.get_model("qa", "Recording")
        OldRecording.objects.create(
            external_id="old", source="test", transcript="AGENT: We refunded both charges.\n", language="en",
            content_hash="0" * 64, rubric_id=rubric.pk, status="judged",
        )  # fmt: skip
    finally:
        # Forward to every app's latest: going back to qa 0015 also unapplied what depends on it.
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert list(recordings_matching(Recording.objects.all(), "refund charge").values_list("external_id", flat=True)) == ["old"]


def test_the_quality_score_filter_leaves_blind_calls_out(calls, supervisor):
    Recording.objects.filter(pk=calls["es"].pk).update(quality_score=40)
    Recording.objects.filter(pk=calls["en"].pk).update(quality_score=90)
    audit = queued_call(calls["es"].rubric, "audit-1", reasons=[Recording.ReviewReason.RANDOM_AUDIT])
    Recording.objects.filter(pk=audit.pk).update(quality_score=10)
    assert found(supervisor, quality_max=50) == ["es-1"]  # the audit's score would tell the judge's answer
    assert found(UserFactory(groups=["Rubric owners"]), quality_max=50) == ["es-1", "audit-1"]
    response = client_for(supervisor).get("/calls/", {"quality_max": "0"})
    assert response.status_code == 200 and "No call matches these filters." in response.content.decode()
    assert client_for(supervisor).get("/calls/", {"quality_max": "101"}).status_code == 400
