"""The review page: transcript with evidence marked, criteria, the decision form and blind audits."""

from __future__ import annotations

import html
import re

import pytest

from qa.models import Recording
from reviews.models import CriterionReview, Review, ReviewClaim
from rubrics.services import rubric_publish
from tests.factories import (
    CriterionExceptionFactory,
    CriterionFactory,
    RecordingFactory,
    RubricFactory,
    UserFactory,
    published_rubric,
)
from tests.review.conftest import client_for, queued, set_evidence

pytestmark = pytest.mark.django_db

QUOTE = "te lo mando hoy antes de las 18"


def marks(page: str) -> list[tuple[str, str]]:
    """(criteria, text) of every <mark>, the text unescaped as the browser shows it."""
    return [(keys, html.unescape(text)) for keys, text in re.findall(r'<mark data-criteria="([^"]*)"[^>]*>(.*?)</mark>', page)]


def panel(page: str, key: str) -> str:
    return re.search(rf'<article class="card criterion[^"]*" id="criterion-{key}".*?</article>', page, re.S).group()


def test_verified_evidence_is_marked_exactly_at_its_span(sup_client):
    recording = queued()
    score = set_evidence(recording, "c1", QUOTE)
    start, end = score.verification_spans[0]

    page = sup_client.get(f"/review/{recording.pk}/").content.decode()

    assert recording.transcript[start:end] == QUOTE
    assert ("c1", recording.transcript[start:end]) in marks(page)


def test_a_quote_over_a_turn_change_is_marked_in_each_turn_without_the_label(sup_client):
    recording = queued()
    set_evidence(recording, "c2", "muchas gracias")  # too short: stays unverified, never marked
    score = set_evidence(recording, "c1", "de octubre? CLIENTE: Sí, exactamente")
    assert score.evidence_verified

    found = [text for keys, text in marks(sup_client.get(f"/review/{recording.pk}/").content.decode()) if keys == "c1"]

    assert found == ["de octubre?", "Sí, exactamente"]


def test_unverified_evidence_is_labelled_with_the_claim_and_the_closest_passage(sup_client):
    recording = queued()
    score = set_evidence(recording, "c2", "te lo mando mañana antes de las 20", confidence=0.0)
    assert not score.evidence_verified and score.verification_closest

    page = sup_client.get(f"/review/{recording.pk}/").content.decode()

    block = panel(page, "c2")
    assert "NOT VERIFIED" in block
    assert "te lo mando mañana antes de las 20" in block
    assert html.escape(score.verification_closest["text"]) in block
    assert all("c2" not in keys.split() for keys, _ in marks(page))
    assert "NOT VERIFIED" not in panel(page, "c1")


def test_the_page_is_in_spanish_by_default_and_in_english_from_the_browser(supervisor):
    recording = queued()
    set_evidence(recording, "c2", "le prometo que mañana lo llamo", confidence=0.0)
    spanish = client_for(supervisor, language="es").get(f"/review/{recording.pk}/").content.decode()
    english = client_for(supervisor, language="en").get(f"/review/{recording.pk}/").content.decode()
    # The unverified mark is in the page's language: the bilingual badge wrapped each criterion's title to
    # three or four lines (the CSV and exports keep the bilingual mark, which survives any copy).
    assert "NO VERIFICADA" in spanish and "Aprobar" in spanish and "Cola de revisión" in spanish
    assert "NOT VERIFIED" in english and "Approve" in english
    assert "NOT VERIFIED" not in spanish and "NO VERIFICADA" not in english


def test_transcript_text_is_escaped(sup_client):
    transcript = "AGENTE: <script>alert(1)</script> le mando hoy el comprobante\nCLIENTE: gracias\n"
    recording = queued(transcript=transcript)
    set_evidence(recording, "c1", "le mando hoy el comprobante")
    page = sup_client.get(f"/review/{recording.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert ("c1", "le mando hoy el comprobante") in marks(page)


def test_turns_show_speaker_and_timestamps_from_structured_turns(sup_client):
    turns = [
        {"speaker": "AGENTE", "text": "Buenas tardes.", "start_ms": 0, "end_ms": 1800},
        {"speaker": "CLIENTE", "text": "Hola, quería reclamar.", "start_ms": 61_500, "end_ms": 65_000},
    ]
    recording = queued(transcript="AGENTE: Buenas tardes.\nCLIENTE: Hola, quería reclamar.\n", turns=turns)
    page = sup_client.get(f"/review/{recording.pk}/").content.decode()
    assert re.search(r'class="speaker">CLIENTE</span> <time>1:01–1:05</time>', page)


def test_criterion_description_exceptions_run_and_rationale_are_shown(sup_client):
    draft = RubricFactory()
    criterion = CriterionFactory(rubric=draft, key="c1", description="Saluda y se presenta.")
    CriterionExceptionFactory(criterion=criterion, text="El cliente pide la baja.")
    recording = queued(rubric=rubric_publish(rubric=draft))
    run = recording.current_run

    page = sup_client.get(f"/review/{recording.pk}/").content.decode()

    block = panel(page, "c1")
    assert "Saluda y se presenta." in block
    assert "El cliente pide la baja." in block and "Not applicable" in block
    assert "The agent commits to a time." in block
    for shown in (run.backend, run.model, run.prompt_version):
        assert f"<code>{shown}</code>" in page


def test_a_criterion_judged_not_applicable_shows_no_value(sup_client):
    recording = queued()
    recording.current_run.scores.filter(criterion__key="c2").update(value=None)

    block = panel(sup_client.get(f"/review/{recording.pk}/").content.decode(), "c2")

    assert '<dd class="value">N/A</dd>' in block


def test_an_unchanged_form_approves_and_stores_no_adjustment(sup_client):
    recording = queued()
    response = sup_client.post(f"/review/{recording.pk}/", form_data(recording, decision="approve"))
    assert response.status_code == 302 and response["Location"] == "/review/"
    review = Review.objects.get()
    assert (review.decision, review.user.username, review.blind) == ("approve", "supervisor", False)
    assert not review.criteria.exists()
    recording.refresh_from_db()
    assert recording.status == Recording.Status.REVIEWED
    assert recording.pk not in [int(pk) for pk in re.findall(r'data-recording="(\d+)"', sup_client.get("/review/").content.decode())]


def test_a_changed_value_with_a_comment_is_stored_as_an_adjustment(sup_client):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    data = form_data(recording, decision="reject", adjusted_mean="3.5", comment="Revisado")
    data |= {"criterion-c2-value": "2", "criterion-c2-comment": "No confirma la hora", "criterion-c3-rejected": "on"}

    assert sup_client.post(f"/review/{recording.pk}/?team=support", data)["Location"] == "/review/?team=support"

    review = Review.objects.get()
    assert (review.decision, review.adjusted_mean, review.comment) == ("reject", 3.5, "Revisado")
    stored = {(entry.criterion.key, entry.adjusted_value, entry.comment, entry.rejected) for entry in review.criteria.all()}
    assert stored == {("c2", 2, "No confirma la hora", False), ("c3", None, "", True)}


def test_a_changed_value_without_comment_is_refused_at_that_criterion_keeping_the_input(sup_client):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    data = form_data(recording, decision="approve", comment="Mi comentario general")
    data |= {"criterion-c2-value": "2", "criterion-c1-comment": "bien citado"}

    response = sup_client.post(f"/review/{recording.pk}/", data)

    assert response.status_code == 200
    page = response.content.decode()
    assert "needs a comment" in panel(page, "c2")
    assert "needs a comment" not in panel(page, "c1")
    assert re.search(r'name="criterion-c2-value" value="2"[^>]*checked', page)
    assert "bien citado</textarea>" in page
    assert "Mi comentario general</textarea>" in page
    # The summary beside the decision buttons names the criterion by its title and links to it.
    summary = re.search(r'<div class="error-summary".*?</div>', page, re.S).group()
    assert '<a href="#criterion-c2">Criterion 2</a>: Changing “Criterion 2” needs a comment saying why.' in summary
    assert "&#x27;c2&#x27;" not in page and "'c2'" not in page
    assert not Review.objects.exists() and not CriterionReview.objects.exists()


def test_form_errors_are_shown_at_their_fields(sup_client):
    recording = queued()
    data = form_data(recording, adjusted_mean="9") | {"criterion-c1-value": "7"}
    page = sup_client.post(f"/review/{recording.pk}/", data).content.decode()
    assert "7 is not one of the available choices" in panel(page, "c1")
    decision = re.search(r'<section class="card decision"[^>]*>.*?</section>', page, re.S).group()
    assert "Choose approve, reject or needs another review." in decision  # no decision chosen
    assert '<a href="#criterion-c1">Criterion 1</a>' in decision
    # The service's own check (the mean within the rubric's scale) lands on its field too.
    data = form_data(recording, decision="approve", adjusted_mean="9")
    decision = re.search(
        r'<section class="card decision"[^>]*>.*?</section>', sup_client.post(f"/review/{recording.pk}/", data).content.decode(), re.S
    ).group()
    assert "between 1 and 5" in decision
    assert not Review.objects.exists()


def test_reviews_are_appended_and_the_latest_supersedes(sup_client, other_supervisor):
    recording = queued()
    sup_client.post(f"/review/{recording.pk}/", form_data(recording, decision="needs_review"))
    other = client_for(other_supervisor)
    other.post(f"/review/{recording.pk}/", form_data(recording, decision="approve", comment="segunda opinión"))

    reviews = list(Review.objects.order_by("created_at"))
    assert [(r.user.username, r.decision) for r in reviews] == [("supervisor", "needs_review"), ("supervisor2", "approve")]
    page = other.get(f"/review/{recording.pk}/").content.decode()
    history = re.search(r'<section class="card history">.*?</section>', page, re.S).group()
    assert history.index("segunda opinión") < history.index("superseded")


def form_data(recording: Recording, **fields: str) -> dict[str, str]:
    """What the browser posts for an untouched form: every value at the model's, "N/A" where the model said so."""
    scores = recording.current_run.scores.all()
    data = {f"criterion-{score.criterion.key}-value": str(score.value) for score in scores if score.value is not None}
    data |= {f"criterion-{score.criterion.key}-value": "na" for score in scores if score.value is None}
    data |= {f"criterion-{score.criterion.key}-comment": "" for score in scores}
    return data | fields


class TestNotApplicable:
    """c2 has a "not applicable" exception, so it gets an "N/A" value button; c1 and c3 don't."""

    def recording(self, **fields) -> Recording:
        return queued(rubric=published_rubric(not_applicable=("c2",)), values={"c1": 4, "c2": 4, "c3": 4}, **fields)

    def test_only_a_criterion_with_the_exception_has_n_a_and_it_starts_at_the_model_s_answer(self, sup_client):
        recording = self.recording()
        page = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert re.search(r'name="criterion-c2-value" value="4"[^>]*checked', panel(page, "c2"))
        assert not re.search(r'value="na"[^>]*checked', panel(page, "c2"))
        assert 'value="na"' not in panel(page, "c1") + panel(page, "c3")
        # One button per point of the scale: one click (or one digit key) sets the value.
        assert re.findall(r'name="criterion-c1-value" value="(\w+)"', page) == ["1", "2", "3", "4", "5"]

        recording.current_run.scores.filter(criterion__key="c2").update(value=None)
        page = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert re.search(r'name="criterion-c2-value" value="na"[^>]*checked', panel(page, "c2"))

    def test_left_ticked_over_the_model_s_own_not_applicable_it_stores_nothing(self, sup_client):
        recording = self.recording()
        recording.current_run.scores.filter(criterion__key="c2").update(value=None)
        response = sup_client.post(f"/review/{recording.pk}/", form_data(recording, decision="approve"))
        assert response.status_code == 302
        assert not Review.objects.get().criteria.exists()

    def test_ticked_over_a_model_number_needs_a_comment_and_is_then_stored(self, sup_client):
        recording = self.recording()
        data = form_data(recording, decision="approve") | {"criterion-c2-value": "na"}

        page = sup_client.post(f"/review/{recording.pk}/", data).content.decode()

        assert "Marking “Criterion 2” not applicable needs a comment" in panel(page, "c2")
        assert re.search(r'name="criterion-c2-value" value="na"[^>]*checked', page)
        assert not Review.objects.exists()

        data["criterion-c2-comment"] = "Se transfirió la llamada."
        assert sup_client.post(f"/review/{recording.pk}/", data).status_code == 302
        entry = CriterionReview.objects.get()
        assert (entry.criterion.key, entry.adjusted_value, entry.not_applicable) == ("c2", None, True)
        page = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert re.search(r'class="latest">N/A<', panel(page, "c2"))
        assert "Criterion 2: N/A — Se transfirió la llamada." in page

    def test_a_blind_audit_takes_n_a_for_a_value(self, sup_client):
        recording = self.recording(reasons=["random_audit"])
        data = {"decision": "approve", "criterion-c1-value": "4", "criterion-c2-value": "na", "criterion-c3-value": "1"}
        assert sup_client.post(f"/review/{recording.pk}/", data)["Location"] == f"/review/{recording.pk}/"

        stored = {(e.criterion.key, e.adjusted_value, e.not_applicable) for e in Review.objects.get().criteria.all()}
        assert stored == {("c1", 4, False), ("c2", None, True), ("c3", 1, False)}
        page = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert re.search(r'class="latest">N/A<', panel(page, "c2"))

    def test_a_blind_audit_still_needs_a_value_without_the_box(self, sup_client):
        recording = self.recording(reasons=["random_audit"])
        data = {"decision": "approve", "criterion-c1-value": "4", "criterion-c2-value": "", "criterion-c3-value": ""}

        page = sup_client.post(f"/review/{recording.pk}/", data).content.decode()

        assert "Choose your value." in panel(page, "c2") and "Choose your value." in panel(page, "c3")
        assert re.search(r'name="criterion-c1-value" value="4"[^>]*checked', page)
        assert not Review.objects.exists()


class TestBlindAudit:
    RATIONALE = "La agente se compromete a una hora concreta."

    def audit(self) -> Recording:
        recording = queued(reasons=["random_audit"], values={"c1": 2, "c2": 3, "c3": 5})
        set_evidence(recording, "c1", QUOTE, rationale=self.RATIONALE)
        return recording

    def test_model_scores_are_hidden_until_the_supervisor_submits(self, sup_client):
        recording = self.audit()
        before = sup_client.get(f"/review/{recording.pk}/").content.decode()

        assert 'id="blind-notice"' in before
        assert self.RATIONALE not in before and f"“{QUOTE}”" not in before
        assert "<mark" not in before and 'class="value"' not in before and "Confidence" not in before
        # Nothing is chosen or outlined: a preselected value would be the model's.
        assert len(re.findall(r'name="criterion-c\d-value"', before)) == 15
        assert not re.search(r'name="criterion-c\d-value"[^>]*checked', before)
        assert "rate model" not in before and re.findall(r'data-model="([^"]*)"', before) == ["", "", ""]

        data = {"decision": "approve", "criterion-c1-value": "4", "criterion-c2-value": "3", "criterion-c3-value": "1"}
        response = sup_client.post(f"/review/{recording.pk}/", data | {f"criterion-c{i}-comment": "" for i in (1, 2, 3)})
        assert response["Location"] == f"/review/{recording.pk}/"

        review = Review.objects.get()
        assert review.blind
        assert sorted((e.criterion.key, e.adjusted_value) for e in review.criteria.all()) == [("c1", 4), ("c2", 3), ("c3", 1)]
        after = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert 'id="blind-notice"' not in after
        assert self.RATIONALE in after and ("c1", QUOTE) in marks(after)
        c1 = panel(after, "c1")
        assert re.search(r'class="value">2<', c1) and re.search(r'class="latest">4<', c1)

    def test_every_value_is_required_and_changes_need_no_comment(self, sup_client):
        recording = self.audit()
        data = {"decision": "approve", "criterion-c1-value": "5", "criterion-c2-value": "1", "criterion-c3-value": ""}
        page = sup_client.post(f"/review/{recording.pk}/", data).content.decode()
        assert "Choose your value." in panel(page, "c3")
        assert "comment" not in " ".join(re.findall(r'class="error field-error">(.*?)<', page))
        assert re.search(r'name="criterion-c1-value" value="5"[^>]*checked', page)
        assert not Review.objects.exists()

    def test_only_a_random_audit_alone_is_blind(self, sup_client):
        recording = queued(reasons=["random_audit", "low_confidence"])
        set_evidence(recording, "c1", QUOTE, rationale=self.RATIONALE)
        page = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert 'id="blind-notice"' not in page and self.RATIONALE in page

    def test_a_blind_needs_review_stays_blind_for_the_next_supervisor(self, sup_client, other_supervisor):
        recording = self.audit()
        data = {"decision": "needs_review"} | {f"criterion-c{i}-value": "3" for i in (1, 2, 3)}
        sup_client.post(f"/review/{recording.pk}/", data)
        # The one who submitted sees the model now, and no longer holds the call...
        assert self.RATIONALE in sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert not ReviewClaim.objects.filter(recording=recording).exists()
        # ...while the next supervisor still audits blind.
        page = client_for(other_supervisor).get(f"/review/{recording.pk}/").content.decode()
        assert 'id="blind-notice"' in page and self.RATIONALE not in page


def test_review_page_runs_a_constant_number_of_queries(
    sup_client, django_assert_max_num_queries, django_assert_num_queries
):
    def reviewed_by_others(recording: Recording, times: int) -> None:
        for _ in range(times):  # needs_review keeps it in the queue for the next supervisor
            reviewer = client_for(UserFactory(groups=["Supervisors"]))
            data = form_data(recording, decision="needs_review") | {"criterion-c1-rejected": "on"}
            assert reviewer.post(f"/review/{recording.pk}/", data).status_code == 302

    small = queued()
    reviewed_by_others(small, 1)
    # 23: the session, the user, their permissions (2), their scope (access.scope), their role's permissions
    # (access.backends: the top bar asks for one their groups lack), the call and its judgment, the claim, the
    # quality policy (3, once per published version and process) and the top bar's disputes.
    with django_assert_max_num_queries(23) as first:
        sup_client.get(f"/review/{small.pk}/")
    expected = len(first.captured_queries)  # read now: the next request resets the connection's query log

    large = queued(transcript="AGENTE: hola, buenas tardes\n" * 200)
    for key in ("c1", "c2", "c3"):
        set_evidence(large, key, "AGENTE: hola, buenas tardes")
    reviewed_by_others(large, 4)
    with django_assert_num_queries(expected):
        sup_client.get(f"/review/{large.pk}/")


def test_a_recording_without_judgment_is_not_found(sup_client):
    recording = RecordingFactory(status=Recording.Status.IN_REVIEW, needs_review=True)
    assert sup_client.get(f"/review/{recording.pk}/").status_code == 404


class TestFinishedCall:
    """A call with a final review is read-only until the supervisor explicitly starts a new review."""

    def reviewed(self, sup_client) -> Recording:
        recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
        data = form_data(recording, decision="reject") | {
            "criterion-c2-value": "2",
            "criterion-c2-comment": "No confirma la hora",
            "criterion-c3-rejected": "on",
            "criterion-c3-comment": "La cita es del cliente",
            "reject_reason": "wrong_score",
        }
        assert sup_client.post(f"/review/{recording.pk}/", data).status_code == 302
        return recording

    def test_the_form_is_locked_and_a_post_without_starting_a_new_review_changes_nothing(self, sup_client):
        recording = self.reviewed(sup_client)
        page = sup_client.get(f"/review/{recording.pk}/").content.decode()
        assert 'id="final-notice"' in page and 'data-active="false"' in page
        assert 'id="decision-bar"' not in page  # nothing to decide until a new review starts
        assert re.search(r"<fieldset\s+disabled", page)
        assert 'href="?new=1"' in page

        response = sup_client.post(f"/review/{recording.pk}/", form_data(recording, decision="approve"))
        assert response.status_code == 200
        assert "already has a final review" in response.content.decode()
        assert list(Review.objects.values_list("decision", flat=True)) == ["reject"]

    def test_a_new_review_starts_from_the_latest_review_s_values_and_keeps_them_unless_changed(self, sup_client):
        recording = self.reviewed(sup_client)
        page = sup_client.get(f"/review/{recording.pk}/?new=1").content.decode()
        assert 'data-active="true"' in page and 'id="new-review-notice"' in page
        assert re.search(r'name="criterion-c2-value" value="2"[^>]*checked', page)  # not the model's 4
        assert "No confirma la hora</textarea>" in panel(page, "c2")
        assert re.search(r'name="criterion-c3-rejected"[^>]*checked', page)

        # Submitting what the page shows, only the decision changed: the adjustments carry over.
        data = form_data(recording, decision="approve") | {
            "criterion-c2-value": "2",
            "criterion-c2-comment": "No confirma la hora",
            "criterion-c3-rejected": "on",
            "criterion-c3-comment": "La cita es del cliente",
        }
        assert sup_client.post(f"/review/{recording.pk}/?new=1", data).status_code == 302
        latest = Review.objects.first()
        assert latest.decision == "approve" and Review.objects.count() == 2
        assert {(e.criterion.key, e.adjusted_value, e.rejected) for e in latest.criteria.all()} == {
            ("c2", 2, False),
            ("c3", None, True),
        }

    def test_the_history_shows_the_outcome_and_the_reject_reason(self, sup_client):
        recording = self.reviewed(sup_client)
        history = re.search(
            r'<section class="card history">.*?</section>', sup_client.get(f"/review/{recording.pk}/").content.decode(), re.S
        ).group()
        assert "<strong>Rejected</strong> (Wrong score)" in history


def test_a_reject_with_nothing_marked_is_refused_next_to_the_decision_buttons(sup_client):
    recording = queued()
    page = sup_client.post(f"/review/{recording.pk}/", form_data(recording, decision="reject")).content.decode()
    decision = re.search(r'<section class="card decision"[^>]*>.*?</section>', page, re.S).group()
    assert "A reject must say what was wrong" in decision
    assert not Review.objects.exists()


def test_after_a_review_the_next_call_opens_or_the_queue_if_the_supervisor_chose_it(sup_client):
    first, second, third = queued(confidence=0.1), queued(confidence=0.2), queued(confidence=0.3)
    response = sup_client.post(f"/review/{first.pk}/?team=support", form_data(first, decision="approve"))
    assert response["Location"] == f"/review/{second.pk}/?team=support"

    response = sup_client.post(f"/review/{second.pk}/", form_data(second, decision="approve", then="queue"))
    assert response["Location"] == "/review/"
    # The choice is remembered for the next review, and shown selected.
    page = sup_client.get(f"/review/{third.pk}/").content.decode()
    assert re.search(r'<option value="queue" selected>', page)
    assert sup_client.post(f"/review/{third.pk}/", form_data(third, decision="approve"))["Location"] == "/review/"


def test_the_closest_passage_of_an_unverified_quote_is_marked_apart_and_highlights_are_numbered(sup_client):
    recording = queued()
    set_evidence(recording, "c1", "de octubre? CLIENTE: Sí, exactamente")
    score = set_evidence(recording, "c2", "te lo mando mañana antes de las 20", confidence=0.0)
    page = sup_client.get(f"/review/{recording.pk}/").content.decode()

    near = re.findall(r'<mark data-near="([^"]*)" class="near" data-number="(\d)" tabindex="0">(.*?)</mark>', page)
    assert near == [("c2", "2", html.escape(score.verification_closest["text"]))]
    verified = re.search(r'<mark data-criteria="c1" class="tint-1" data-number="1" tabindex="0">', page)
    assert verified, "a verified quote is tinted and numbered by its criterion and reachable by Tab"


def test_the_language_is_changed_with_a_button_not_on_change(sup_client):
    recording = queued()
    page = sup_client.get(f"/review/{recording.pk}/").content.decode()
    language_form = re.search(r'<form action="/i18n/setlang/".*?</form>', page, re.S).group()
    assert "onchange" not in page and '<button type="submit"' in language_form
