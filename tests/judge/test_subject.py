"""Whose words, through the pipeline: a criterion about the agent, supported by the customer's words
alone, is stored `wrong_subject` (unverified, confidence 0, routed), and `reverify` applies the rule
to scores stored before it. The judge is the fake OpenAI-compatible server over HTTP."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from qa.evidence import VERIFIER_VERSION
from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import Recording, Score
from rubrics.models import Criterion
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db

CUSTOMER_LINE = "CLIENTE: Hola, me cobraron dos veces la factura de octubre."
CUSTOMER_AND_AGENT = "me cobraron dos veces la factura de octubre. AGENTE: Entiendo. Para confirmar"


@pytest.fixture
def rubric():
    """The judge tests' rubric, its greeting judged as the agent's behaviour."""
    rubric = judge_rubric()
    Criterion.objects.filter(rubric=rubric, key="saludo").update(subject=Criterion.Subject.AGENT)
    return rubric


def judged(recording: Recording, fake_llm, **answers: dict) -> dict[str, Score]:
    def reply(request: dict) -> dict:
        answer = answer_for(request)
        for key, changes in answers.items():
            answer["scores"][key].update(changes)
        return completion(answer)

    fake_llm.script(reply)
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    recording.refresh_from_db()
    return {score.criterion.key: score for score in Score.objects.filter(run=run).select_related("criterion")}


def test_the_prompt_says_whose_behaviour(fake_llm, rubric):
    judged(RecordingFactory(rubric=rubric), fake_llm)

    [request] = fake_llm.requests
    system = request["messages"][0]["content"]
    assert "Whose behaviour: the agent's. The quote must include words the agent said." in system
    assert system.count("Whose behaviour") == 1  # the criterion about anyone says nothing


def test_a_customers_line_for_an_agent_criterion_is_wrong_subject_and_routed(fake_llm, rubric):
    recording = RecordingFactory(rubric=rubric)

    scores = judged(recording, fake_llm, saludo={"evidence": CUSTOMER_LINE}, compromiso={"evidence": CUSTOMER_LINE})

    saludo = scores["saludo"]
    assert saludo.verification_status == "wrong_subject" and not saludo.evidence_verified
    assert saludo.confidence == 0.0 and saludo.model_confidence == 0.95
    assert not saludo.value_exists
    [(start, end)] = saludo.verification_spans
    assert recording.transcript[start:end] == "Hola, me cobraron dos veces la factura de octubre"
    # The criterion about anyone takes the same line.
    assert scores["compromiso"].verification_status == "verified" and scores["compromiso"].confidence == 0.95
    assert recording.needs_review and "unverified_evidence" in recording.review_reasons


def test_a_customer_plus_agent_quote_verifies(fake_llm, rubric):
    recording = RecordingFactory(rubric=rubric)

    scores = judged(recording, fake_llm, saludo={"evidence": CUSTOMER_AND_AGENT})

    assert scores["saludo"].verification_status == "verified" and scores["saludo"].confidence == 0.95
    assert not recording.needs_review


def test_not_applicable_may_quote_the_other_side(fake_llm, rubric):
    """A "does not apply" quote shows the exception's situation, often in the customer's words."""
    Criterion.objects.filter(rubric=rubric, key="compromiso").update(subject=Criterion.Subject.AGENT)
    recording = RecordingFactory(rubric=rubric)

    scores = judged(recording, fake_llm, compromiso={"evidence": CUSTOMER_LINE, "value": None})

    assert scores["compromiso"].value is None and scores["compromiso"].verification_status == "verified"
    # Scored, the same quote would not do.
    scores = judged(RecordingFactory(rubric=rubric), fake_llm, compromiso={"evidence": CUSTOMER_LINE, "value": 1})
    assert scores["compromiso"].verification_status == "wrong_subject"


def test_reverify_applies_the_subject_to_a_stored_score(fake_llm, rubric):
    recording = RecordingFactory(rubric=rubric)
    scores = judged(recording, fake_llm, saludo={"evidence": CUSTOMER_LINE})
    # As the previous verifier stored it: the customer's line, verified.
    Score.objects.filter(pk=scores["saludo"].pk).update(
        evidence_verified=True, verification_status="verified", confidence=0.95, verifier_version="2026.11.1"
    )
    Recording.objects.filter(pk=recording.pk).update(
        status=Recording.Status.JUDGED, needs_review=False, review_reasons=[], lowest_confidence=0.95
    )
    out = StringIO()

    call_command("reverify", "--rubric", rubric.slug, stdout=out)

    assert "1 scores changed in 1 runs" in out.getvalue()
    saludo = Score.objects.get(pk=scores["saludo"].pk)
    assert saludo.verification_status == "wrong_subject" and not saludo.evidence_verified
    assert saludo.confidence == 0.0 and saludo.verifier_version == VERIFIER_VERSION
    recording.refresh_from_db()
    assert recording.status == Recording.Status.IN_REVIEW and recording.review_reasons == ["unverified_evidence"]
    assert len(fake_llm.requests) == 1  # no new LLM call
