"""The calibration pages: blind scoring, who may do what, the results and the CSV."""

from __future__ import annotations

import csv
import io
import re

import pytest

from calibration.services import SessionStateError, agreed_value_set, calibration_close
from reviews.models import AgreedValue, CalibrationEntry, CalibrationSession
from tests.calibration.conftest import score
from tests.factories import UserFactory, judged_recording
from tests.review.conftest import client_for, set_evidence

EVIDENCE = "te lo mando hoy antes de las 18"


def test_the_scoring_page_is_blind(session, supervisors, calls):
    ana, ben, _eva = supervisors
    call = calls[0]
    set_evidence(call, "c1", EVIDENCE, rationale="The agent commits to a time: UNIQUE-RATIONALE.")
    score(session, ben, call, 5, comment="BEN-SECRET-COMMENT")
    page = client_for(ana).get(f"/calibrations/{session.pk}/calls/{call.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Buenas tardes, le atiende Marta" in html  # the transcript, turn by turn
    assert "<mark" not in html  # no evidence marks
    assert "UNIQUE-RATIONALE" not in html and "BEN-SECRET-COMMENT" not in html and "test-model" not in html
    # No value anywhere: the judge gave c1 = 1 and ben 5; no button is chosen, none is outlined as the model's.
    assert 'name="c1-value"' in html and not re.search(r'name="c\d-value"[^>]*checked', html) and "rate model" not in html


def test_a_participant_scores_and_changes_their_entry_on_the_page(session, supervisors, calls):
    ana = supervisors[0]
    client = client_for(ana)
    url = f"/calibrations/{session.pk}/calls/{calls[0].pk}/"
    refused = client.post(url, {"c1-value": "9"})
    assert refused.status_code == 200 and "Select a valid choice. 9 is not one of the available choices." in refused.content.decode()
    assert "Choose your value, or N/A." in refused.content.decode()
    saved = client.post(url, {"c1-value": "4", "c2-value": "na", "comment": "fine"})
    assert saved.status_code == 302 and saved["Location"] == f"/calibrations/{session.pk}/calls/{calls[1].pk}/"
    again = client.get(url).content.decode()
    assert 'value="4"' in again and "checked" in again  # their own values come back to be changed
    client.post(url, {"c1-value": "3", "c2-value": "2"})
    entry = CalibrationEntry.objects.get()
    assert [(v.criterion.key, v.value, v.not_applicable) for v in entry.values.order_by("criterion__order")] == [
        ("c1", 3, False),
        ("c2", 2, False),
    ]


def test_a_supervisor_cannot_create_or_close_and_others_entries_stay_hidden(session, supervisors, calls, lead):
    ana, ben, _eva = supervisors
    score(session, ben, calls[0], 5, comment="BEN-SECRET-COMMENT")
    client = client_for(ana)
    assert client.get("/calibrations/new/").status_code == 403
    assert client.post(f"/calibrations/{session.pk}/close/").status_code == 403
    assert CalibrationSession.objects.get().status == "open"
    overview = client.get(f"/calibrations/{session.pk}/").content.decode()
    # While open, a participant sees their own progress only: not even how far the others are.
    assert "BEN-SECRET-COMMENT" not in overview and "ben:" not in overview
    assert "ana: 0 of 4 calls scored" in overview
    assert "ben: 1 of 4 calls scored" in client_for(lead).get(f"/calibrations/{session.pk}/").content.decode()
    assert "calibration-matrix" not in overview
    assert client.get(f"/calibrations/{session.pk}/?format=csv")["Content-Type"].startswith("text/html")
    # Someone outside the session sees nothing of it.
    outsider = UserFactory(username="zoe", groups=["Supervisors"])
    assert client_for(outsider).get(f"/calibrations/{session.pk}/").status_code == 404
    assert client_for(outsider).get(f"/api/calibrations/{session.pk}/").status_code == 404
    # The lead is no participant: they cannot score.
    assert client_for(lead).get(f"/calibrations/{session.pk}/calls/{calls[0].pk}/").status_code == 403


def test_the_lead_creates_a_session_on_the_page(lead, supervisors, calls):
    client = client_for(lead)
    form = client.get("/calibrations/new/").content.decode()
    assert "ana" in form and "lead" not in form.split("participants")[1].split("</fieldset>")[0]
    ana, ben, _eva = supervisors
    response = client.post(
        "/calibrations/new/",
        {"name": "Greeting", "rubric": "care", "participants": [ana.pk, ben.pk], "choose": "ids",
         "recording_ids": f"{calls[1].pk}, {calls[2].pk}"},
    )  # fmt: skip
    session = CalibrationSession.objects.get()
    assert response["Location"] == f"/calibrations/{session.pk}/"
    assert sorted(session.calls.values_list("recording_id", flat=True)) == [calls[1].pk, calls[2].pk]
    refused = client.post(
        "/calibrations/new/", {"name": "x", "rubric": "care", "participants": [ana.pk], "choose": "sample", "sample": 2}
    )
    assert "A calibration needs at least two participants." in refused.content.decode()


def test_results_after_close_with_agreed_values_and_the_csv(session, supervisors, calls, lead):
    ana, ben, eva = supervisors
    for call, (a, b, e) in zip(calls, [(1, 1, 1), (2, 2, 2), (3, 3, 3), (5, 5, 2)]):
        score(session, ana, call, a, c2=None)
        score(session, ben, call, b)
        score(session, eva, call, e, comment="EVA-NOTE" if call == calls[3] else "")
    calibration_close(session=session, user=lead)
    lead_client = client_for(lead)
    # One form for the whole page: a row per call and criterion; blank rows stay without an agreed value.
    page = lead_client.get(f"/calibrations/{session.pk}/").content.decode()
    assert page.count('form="agreed-form"') == 3 * len(calls) * 2 and page.count("<form") - page.count('class="lang"') >= 1
    rows = {
        f"agreed:{calls[3].pk}:c1:value": "4", f"agreed:{calls[3].pk}:c1:note": "the greeting was late",
        f"agreed:{calls[2].pk}:c2:na": "on", f"agreed:{calls[2].pk}:c2:value": "",
        f"agreed:{calls[0].pk}:c1:value": "", f"agreed:{calls[0].pk}:c1:note": "",
    }  # fmt: skip
    response = lead_client.post(f"/calibrations/{session.pk}/agree/", rows)
    assert response.status_code == 302
    assert sorted((a.call.recording_id, a.criterion.key, a.value, a.not_applicable) for a in AgreedValue.objects.all()) == [
        (calls[2].pk, "c2", None, True), (calls[3].pk, "c1", 4, False),
    ]  # fmt: skip
    # All or nothing: one bad row (off the scale) and nothing changes.
    lead_client.post(f"/calibrations/{session.pk}/agree/", {**rows, f"agreed:{calls[0].pk}:c1:value": "9"})
    assert AgreedValue.objects.count() == 2
    assert (
        client_for(ana)
        .post(f"/calibrations/{session.pk}/agree/", {f"agreed:{calls[3].pk}:c1:value": "1"})
        .status_code
        == 403
    )

    html = client_for(ana).get(f"/calibrations/{session.pk}/").content.decode()
    assert "EVA-NOTE" in html  # after close, everyone's entries are shown
    assert f'<a href="/review/{calls[3].pk}/">' in html  # a supervisor opens the call from its id
    c1 = html.split('id="criterion-c1"')[1].split('id="criterion-c2"')[0]
    rows = c1.split("<tbody>")[1].split("<tr")[1:]
    assert f'data-recording="{calls[3].pk}"' in rows[0] and "discuss" in rows[0]  # spread 3 first
    assert '<dd class="figure-exact">83.3 %</dd>' in c1  # 10 of 12 pairs
    assert "eva −0.75" in c1 or "eva -0.75" in c1

    download = lead_client.get(f"/calibrations/{session.pk}/?format=csv").getvalue()
    lines = list(csv.reader(io.StringIO(download.decode("utf-8-sig"))))  # the CSV starts with a BOM for Excel
    assert lines[0] == [
        "recording_id", "external_id", "criterion_key", "ana", "ben", "eva", "judge", "spread", "agreed", "agreed_note",
    ]  # fmt: skip
    assert lines[1] == [
        str(calls[3].pk),
        calls[3].external_id,
        "c1",
        "5",
        "5",
        "2",
        "4",
        "3",
        "4",
        "the greeting was late",
    ]
    assert [str(calls[0].pk), calls[0].external_id, "c2", "N/A", "3", "3", "3", "0", "", ""] in lines


def test_agreed_values_are_refused_before_close(session, lead, calls):
    with pytest.raises(SessionStateError):
        agreed_value_set(
            session=session, recording_id=calls[0].pk, criterion_key="c1", value=3, not_applicable=False, note="",
            user=lead,
        )  # fmt: skip


def test_a_judge_value_whose_quote_did_not_verify_is_marked_and_counts_in_no_figure(session, supervisors, calls, lead):
    from calibration.selectors import session_results

    ana, ben, eva = supervisors
    for call in calls:
        for person in (ana, ben, eva):
            score(session, person, call, 2)
    set_evidence(calls[3], "c1", "una frase que nadie dijo", confidence=0.0)  # the judge's c1 = 4 does not exist
    calibration_close(session=session, user=lead)
    for call in calls:
        agreed_value_set(
            session=session, user=lead, recording_id=call.pk, criterion_key="c1", value=2, not_applicable=False, note=""
        )

    c1 = next(result for result in session_results(session=session).criteria if result.criterion.key == "c1")
    unverified = next(row for row in c1.rows if row.call.recording_id == calls[3].pk)
    assert not unverified.judge_verified
    # Judge 1, 2, 3 against agreed 2, 2, 2: the unverified 4 is no value to compare.
    assert (c1.judge_vs_agreed_n, c1.judge_vs_agreed_mae) == (3, pytest.approx(2 / 3))
    html = client_for(ana).get(f"/calibrations/{session.pk}/").content.decode()
    row = html.split(f'id="call-c1-{calls[3].pk}"')[1].split("</tr>")[0]
    judge_cell = row.split('class="judge">')[1].split("</td>")[0]
    assert "NOT VERIFIED" in judge_cell and "4" not in judge_cell
    download = client_for(lead).get(f"/calibrations/{session.pk}/?format=csv").getvalue().decode("utf-8-sig")
    line = next(line for line in csv.reader(io.StringIO(download)) if line[:3] == [str(calls[3].pk), calls[3].external_id, "c1"])
    assert line[6] == "NO VERIFICADA / NOT VERIFIED"


def test_the_lead_names_calls_by_their_external_ids(lead, supervisors, calls):
    """The ids a lead knows are the calls' own (the queue, the calls list and the API show them); the internal
    numbers appear only in URLs. Both are taken, in any mix."""
    ana, ben, _eva = supervisors
    response = client_for(lead).post(
        "/calibrations/new/",
        {"name": "By id", "rubric": "care", "participants": [ana.pk, ben.pk], "choose": "ids",
         "recording_ids": f"{calls[0].external_id}, {calls[3].external_id} {calls[1].pk}"},
    )  # fmt: skip
    session = CalibrationSession.objects.get()
    assert response["Location"] == f"/calibrations/{session.pk}/"
    assert sorted(session.calls.values_list("recording_id", flat=True)) == sorted([calls[0].pk, calls[1].pk, calls[3].pk])
    unknown = client_for(lead).post(
        "/calibrations/new/",
        {"name": "By id", "rubric": "care", "participants": [ana.pk, ben.pk], "choose": "ids",
         "recording_ids": f"{calls[0].external_id} no-such-call"},
    )  # fmt: skip
    field = unknown.content.decode().split('id="field-recording_ids"', 1)[1].split('<div class="field"', 1)[0]
    assert "no-such-call" in field and calls[0].external_id not in field.split("field-error", 1)[1]


def test_leftover_ids_do_not_block_a_random_sample(lead, supervisors, calls):
    ana, ben, _eva = supervisors
    response = client_for(lead).post(
        "/calibrations/new/",
        {"name": "Drawn", "rubric": "care", "participants": [ana.pk, ben.pk], "choose": "sample", "sample": 2,
         "recording_ids": "typed, then changed my mind"},
    )  # fmt: skip
    session = CalibrationSession.objects.get()
    assert response.status_code == 302 and session.calls.count() == 2


@pytest.mark.parametrize("language,counted,refused", [
    ("en", "4 judged calls can be drawn", "Only 4 judged calls match; a sample of 10 is not possible."),
    ("es", "Se pueden sortear 4 llamadas evaluadas", "Solo coinciden 4 llamadas evaluadas; no es posible una muestra de 10."),
])  # fmt: skip
def test_the_default_sample_says_how_many_calls_are_eligible(lead, supervisors, calls, language, counted, refused):
    client = client_for(lead, language)
    page = client.get("/calibrations/new/").content.decode()
    sample = page.split('id="field-sample"', 1)[1].split('<div class="field"', 1)[0]
    assert counted in sample
    ana, ben, _eva = supervisors
    response = client.post(
        "/calibrations/new/",
        {"name": "Default", "rubric": "care", "participants": [ana.pk, ben.pk], "choose": "sample", "sample": 10},
    )  # fmt: skip
    sample = response.content.decode().split('id="field-sample"', 1)[1].split('<div class="field"', 1)[0]
    assert refused in sample and 'class="error field-error"' in sample


@pytest.mark.parametrize("language,counted,refused", [
    ("en", "1 judged call can be drawn", "Only 1 judged call matches; a sample of 10 is not possible."),
    ("es", "Se puede sortear 1 llamada evaluada", "Solo coincide 1 llamada evaluada; no es posible una muestra de 10."),
])  # fmt: skip
def test_one_eligible_call_is_said_in_the_singular(lead, supervisors, cal_rubric, language, counted, refused):
    """The demo's English rubric has one judged call: "1 llamadas evaluadas" read wrong on its form."""
    judged_recording(rubric=cal_rubric, values={"c1": 1, "c2": 3})
    client = client_for(lead, language)
    sample = client.get("/calibrations/new/").content.decode().split('id="field-sample"', 1)[1].split('<div class="field"', 1)[0]
    assert counted in sample
    ana, ben, _eva = supervisors
    response = client.post(
        "/calibrations/new/",
        {"name": "Default", "rubric": "care", "participants": [ana.pk, ben.pk], "choose": "sample", "sample": 10},
    )  # fmt: skip
    assert refused in response.content.decode()
