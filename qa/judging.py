"""Judging a recording: enqueue it, and the one path that asks the judge about
a transcript (prompt, schema, validation, evidence verifier, samples) without
storing anything. The executor that claims a run, calls that path and stores
its result (and sweeps what was lost) is qa.execution, shared with experiments.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from core.jobs import Outcome, Result  # noqa: F401  (importers from before core.jobs)
from core.queue import task_publish
from qa.answer import (
    AnswerShape,
    CombinedAnswer,
    CriterionAnswer,
    InvalidAnswerError,
    answer_max_tokens,
    answer_parse,
    answer_schema,
    answers_combine,
)
from qa.evidence import VERIFIER_VERSION, Reference, parse_turns, references_parse, references_text, verify_evidence, verify_references
from qa.llm import Backend, Completion, answer_shape_get, backend_get, context_problem, llm_complete
from qa.llm_errors import LLMError
from qa.models import Judge, JudgeRun, Recording, Score
from qa.prompt import Prompt, prompt_build
from qa.redaction.engine import Redaction, placeholders_as_words
from qa.redaction.services import judge_view
from qa.routing import recording_route
from rubrics.models import Criterion, Rubric

logger = logging.getLogger(__name__)

ACTIVE = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)
VERIFICATION_FIELDS = (
    "evidence_verified",
    "verification_status",
    "verification_spans",
    "verification_closest",
    "verifier_version",
)


# --- Enqueueing ---------------------------------------------------------------


@transaction.atomic
def judge_run_create(*, recording: Recording) -> tuple[JudgeRun, bool]:
    """A pending run for `recording`, or its active one; and whether it is new."""
    # Lock the recording so two callers cannot both find no active run.
    Recording.objects.select_for_update().filter(pk=recording.pk).first()
    active = JudgeRun.objects.filter(recording=recording, status__in=ACTIVE).first()
    if active is not None:
        return active, False
    run = JudgeRun.objects.create(recording=recording, rubric=recording.rubric, judge=Judge.objects.default())
    Recording.objects.filter(pk=recording.pk).update(status=Recording.Status.QUEUED, updated_at=timezone.now())
    recording.status = Recording.Status.QUEUED
    return run, True


@transaction.atomic
def recording_enqueue_judging(*, recording: Recording) -> JudgeRun:
    """Create a pending run for `recording` (or return its active one) and
    enqueue it once the transaction commits.

    If the broker is unreachable, the recording stays received with its run
    pending, and the sweep enqueues it when the broker is back.
    """
    run, created = judge_run_create(recording=recording)
    if created:
        transaction.on_commit(lambda: judge_run_publish(run=run))
    return run


def judge_run_publish(*, run: JudgeRun, countdown: float = 0.0) -> bool:
    """Hand the run to a worker; False (and the recording back to received) if the broker is down."""
    try:
        task_publish("qa.judge_run", run.pk, countdown=countdown)
    except OperationalError:
        logger.warning("Broker unreachable: run %s stays pending for the sweep.", run.pk, exc_info=True)
        Recording.objects.filter(pk=run.recording_id, status=Recording.Status.QUEUED).update(
            status=Recording.Status.RECEIVED, updated_at=timezone.now()
        )
        if JudgeRun.recording.is_cached(run):  # the caller's copy (ingest's answer) must not say queued
            run.recording.status = Recording.Status.RECEIVED
        return False
    return True


# --- Judging ------------------------------------------------------------------


def _usage(completions: list[Completion]) -> dict[str, int | str | None]:
    """The tokens, time and raw output of a judgment's calls (one per sample)."""
    if not completions:
        return {}

    def total(counts: list[int | None]) -> int | None:
        return None if all(count is None for count in counts) else sum(count or 0 for count in counts)

    return {
        "prompt_tokens": total([completion.prompt_tokens for completion in completions]),
        "completion_tokens": total([completion.completion_tokens for completion in completions]),
        "cached_tokens": total([completion.cached_tokens for completion in completions]),
        "llm_duration_ms": sum(completion.duration_ms for completion in completions),
        "raw_output": "\n".join(completion.content or completion.refusal or "" for completion in completions),
    }


def _answer_problem(completion: Completion) -> str | None:
    """Why a completion cannot be a judgment even before it is parsed."""
    if completion.refusal:
        return f"The model refused to judge: {completion.refusal}"
    if completion.finish_reason == "length":
        return "The answer was cut off by the token limit."
    if completion.finish_reason == "content_filter":
        return "The provider's content filter stopped the answer."
    if not completion.content:
        return "The model returned an empty answer."
    return None


def verification_fields(
    *,
    evidence: str,
    transcript: str,
    model_confidence: float,
    subject: str = Criterion.Subject.ANY,
    references: Sequence[Reference] | None = None,
) -> dict[str, object]:
    """A score's verification and the confidence it leaves: an unverified
    quote supports nothing, whatever the model felt. `subject`: the criterion's
    (a quote of only someone else's words is `wrong_subject`). With
    `references` (reference mode) they are verified, not `evidence`."""
    if references is not None:
        check = verify_references(references, transcript, subject)
    else:
        check = verify_evidence(evidence, transcript, subject)
    return {
        "confidence": model_confidence if check.verified else 0.0,
        "evidence_verified": check.verified,
        "verification_status": check.status.value,
        "verification_spans": [list(span) for span in check.spans],
        "verification_closest": check.closest.to_dict() if check.closest else None,
        "verifier_version": VERIFIER_VERSION,
    }


def _subject(criterion: Criterion, value: int | None) -> str:
    """Whose words a score's quote must include: the criterion's subject, except for "does not apply",
    whose quote shows the exception's situation, often in the other side's words ("the caller asks
    to be transferred")."""
    return Criterion.Subject.ANY if value is None else criterion.subject


# --- Redaction (qa/redaction): the judge is sent `view.text`; its quotes are verified against that
# same text (a placeholder is a word there), and the spans stored map back onto the stored transcript.
def view_verification_fields(
    *,
    evidence: str | None,
    view: Redaction,
    model_confidence: float,
    subject: str,
    references: Sequence[Reference] | None = None,
) -> dict[str, object]:
    if references is not None:
        references = [Reference(ref.turn, placeholders_as_words(ref.words) if ref.words else ref.words) for ref in references]
    fields = verification_fields(
        evidence=placeholders_as_words(evidence) if evidence else evidence,
        transcript=placeholders_as_words(view.text),
        model_confidence=model_confidence,
        subject=subject,
        references=references,
    )
    if view.masked or "[" in view.text:
        fields["verification_spans"] = [list(view.to_source(start, end)) for start, end in fields["verification_spans"]]
        if closest := fields["verification_closest"]:
            start, end = view.to_source(closest["start"], closest["end"])
            fields["verification_closest"] = {**closest, "text": view.text[closest["start"] : closest["end"]],
                                              "start": start, "end": end}
    return fields


@dataclass(frozen=True)
class Question:
    """What the judge is asked about every recording of one rubric version."""

    criteria: list[Criterion]
    schema: dict[str, Any]  # in reference mode, without any transcript's turn numbers
    prompt: Prompt
    max_tokens: int
    shape: AnswerShape

    def schema_for(self, transcript: str) -> dict[str, Any]:
        """The schema sent with a call about `transcript` (the text the judge is sent): in reference
        mode, a reference's turn is an enum of its turn numbers."""
        if not self.shape.references:
            return self.schema
        return answer_schema(criteria=self.criteria, shape=self.shape, turns=len(parse_turns(transcript)))


def _question_build(rubric: Rubric, shape: AnswerShape) -> Question:
    criteria = list(rubric.criteria.prefetch_related("exceptions"))
    schema = answer_schema(criteria=criteria, shape=shape)
    return Question(
        criteria=criteria,
        schema=schema,
        prompt=prompt_build(rubric=rubric, criteria=criteria, schema=schema, evidence_mode=shape.evidence_mode),
        max_tokens=answer_max_tokens(criteria=criteria, shape=shape),
        shape=shape,
    )


@functools.lru_cache(maxsize=64)
def _question(rubric: Rubric, published_at: datetime | None, shape: AnswerShape) -> Question:
    # A published rubric version never changes, so each process builds its
    # question once; the publication time keys out a reused primary key.
    return _question_build(rubric, shape)


@functools.lru_cache(maxsize=64)
def _question_as_created(rubric: Rubric, prompt_version: str, shape: AnswerShape) -> Question:
    # A draft may change, but a job bound to the prompt version its experiment
    # recorded asks that question or none: each process builds it once, and a
    # draft edited since builds another version, which fails the job (an
    # exception: never cached) instead of judging a question nobody chose to test.
    return _question_bound(rubric, _question_build(rubric, shape), prompt_version)


def _question_bound(rubric: Rubric, question: Question, prompt_version: str) -> Question:
    """`question`, if it is the one `prompt_version` names; else a final LLMError saying what changed."""
    if question.prompt.version == prompt_version:
        return question
    why = (
        "the draft changed after the experiment was created"
        if rubric.is_draft
        else "the judge's prompt or answer format changed after the experiment was created"
    )
    raise LLMError(
        f"Rubric {rubric.slug} v{rubric.version} no longer asks the question this experiment tests "
        f"(prompt version {prompt_version}, now {question.prompt.version}): {why}; create a new experiment.",
        transient=False,
    )


def prompt_version_current(*, rubric: Rubric, judge: Judge | None) -> str:
    """The prompt version `judge` would be asked about `rubric` now, built afresh
    (a draft may have changed); the judge's backend is neither built nor started.
    Raises LLMError when the judge cannot be used."""
    return _question_build(rubric, answer_shape_get(judge)).prompt.version


@dataclass(frozen=True)
class Asking:
    """A judge ready to be asked about recordings of one rubric version."""

    judge: Judge | None  # None: the environment's judge
    backend: Backend
    question: Question
    samples: int = 1
    temperature: float = 0.0
    language: str = ""  # the rubric's: redaction's placeholders are written in it

    @property
    def claim_fields(self) -> dict[str, str]:
        """What a run records about who was asked what."""
        backend, prompt = self.backend, self.question.prompt
        return {"backend": backend.name, "model": backend.model, "prompt_version": prompt.version}

    def reservation(self, transcript: str) -> int:
        """Tokens to reserve from the shared quota, per sample: the prompt's estimate plus the whole completion budget."""
        messages = self.question.prompt.messages(transcript=transcript)
        return (sum(len(message["content"]) for message in messages) // 4 + self.question.max_tokens) * self.samples


def asking_prepare(
    *, rubric: Rubric, judge: Judge | None, samples: int | None = None, prompt_version: str = ""
) -> Asking:
    """The backend and the question; raises LLMError when the judge cannot be used.
    `samples` overrides the judge's own number of samples. `prompt_version`
    (an experiment's arm records the one it was created with) binds the job to
    that question: LLMError if the rubric version no longer builds it. Without
    one, a published version's question is cached and a draft's read afresh."""
    backend = backend_get(judge)
    shape = backend.answer_shape
    if rubric.published_at:
        question = _question(rubric, rubric.published_at, shape)
        if prompt_version:
            question = _question_bound(rubric, question, prompt_version)
    elif prompt_version:
        question = _question_as_created(rubric, prompt_version, shape)
    else:
        question = _question_build(rubric, shape)
    return Asking(
        judge=judge,
        backend=backend,
        question=question,
        samples=samples or (judge.samples if judge else 1),
        temperature=judge.temperature if judge else 0.0,
        language=rubric.language,
    )


@dataclass(frozen=True)
class DraftScore:
    """One criterion's judged and verified result, not stored: the fields of a Score without its run."""

    criterion: Criterion
    fields: dict[str, Any]


@dataclass(frozen=True)
class Judgment:
    """One judgment of one transcript, nothing stored: the scores, or why there are none.

    `retry` is set for a transient failure (retried under the same rules in
    production and experiments), `error` for a final one.
    """

    scores: list[DraftScore]
    usage: dict[str, int | str | None]
    error: str = ""
    retry: LLMError | None = None


def _draft(combined: CombinedAnswer, view: Redaction) -> DraftScore:
    answer = combined.answer
    # References are stored as the words a supervisor reads, each line headed by its turn number
    # (qa.evidence.references_text), from which they are read back to verify again.
    evidence = answer.evidence if answer.references is None else references_text(answer.references, view.text)
    return DraftScore(
        criterion=answer.criterion,
        fields={
            "value": answer.value,
            "model_confidence": answer.confidence,
            "evidence": evidence,
            "rationale": answer.rationale,
            "sample_values": combined.sample_values,
            "unstable": combined.unstable,
            **view_verification_fields(
                evidence=answer.evidence, view=view, model_confidence=answer.confidence,
                subject=_subject(answer.criterion, answer.value), references=answer.references,
            ),  # fmt: skip
        },
    )


@dataclass(frozen=True)
class Request:
    """What the judge is sent about one transcript (as `view`, redacted where it must be), or why nothing is."""

    view: Redaction
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    problem: str = ""


def judgment_request(*, asking: Asking, transcript: str, llm_spans: list | None = None) -> Request:
    """The messages and schema of a call about `transcript`: what the synchronous path sends and what a
    batch's line carries (qa.batching). A judge that is not the local model is sent the transcript
    redacted (qa.redaction; `llm_spans`: where the recording's redaction found what to mask)."""
    question = asking.question
    view = judge_view(transcript=transcript, local=asking.backend.name == "local", language=asking.language,
                      llm_spans=llm_spans)
    messages = question.prompt.messages(transcript=view.text)
    # Issue 26: a transcript longer than the judge's context fails with that reason, before any call.
    problem = context_problem(backend=asking.backend, messages=messages, max_tokens=question.max_tokens)
    return Request(view=view, messages=messages, schema=question.schema_for(view.text), problem=problem)


def judgment_of(*, asking: Asking, request: Request, completions: list[Completion]) -> Judgment:
    """The judgment the completions of `request` (one per sample) make: every answer checked and
    parsed, every quote verified. The one check both paths share, synchronous and batch."""
    samples: list[list[CriterionAnswer]] = []
    for number, completion in enumerate(completions, 1):
        done = _usage(completions[:number])
        if problem := _answer_problem(completion):
            return Judgment([], done, error=problem)
        try:
            samples.append(
                answer_parse(content=completion.content or "", criteria=asking.question.criteria,
                             shape=asking.backend.answer_shape)
            )  # fmt: skip
        except InvalidAnswerError as error:
            return Judgment([], done, error=str(error))
    by_criterion = zip(*samples, strict=True)
    return Judgment([_draft(answers_combine(answers), request.view) for answers in by_criterion], _usage(completions))


def judgment_make(*, asking: Asking, transcript: str, llm_spans: list | None = None) -> Judgment:
    """Ask the judge about one transcript (once per sample), validate every
    answer and verify its quotes: the one path production and experiments share."""
    question = asking.question
    request = judgment_request(asking=asking, transcript=transcript, llm_spans=llm_spans)
    if request.problem:
        return Judgment([], _usage([]), error=request.problem)
    completions: list[Completion] = []
    for _sample in range(asking.samples):
        try:
            completion = llm_complete(
                backend=asking.backend,
                messages=request.messages,
                schema=request.schema,
                max_tokens=question.max_tokens,
                temperature=asking.temperature,
            )
        except LLMError as error:
            return Judgment([], _usage(completions), retry=error) if error.transient else Judgment(
                [], _usage(completions), error=str(error)
            )
        except SoftTimeLimitExceeded:
            return Judgment([], _usage(completions), retry=LLMError("The judgment ran out of time.", transient=True))
        completions.append(completion)
        # Checked as it comes: a bad sample is not worth the others' calls.
        judgment = judgment_of(asking=asking, request=request, completions=completions)
        if judgment.error:
            return judgment
    return judgment


def judgment_tokens(judgment: Judgment) -> int:
    return int(judgment.usage.get("prompt_tokens") or 0) + int(judgment.usage.get("completion_tokens") or 0)


@transaction.atomic
def judge_run_reverify(*, run: JudgeRun) -> int:
    """Verify the stored scores of a succeeded run again (a new verifier, say),
    without another LLM call; re-route its recording if a confidence changed
    and the run is the recording's current one. Returns how many scores changed."""
    scores = list(run.scores.select_related("criterion").select_for_update(of=("self",)))
    fields = ["confidence", *VERIFICATION_FIELDS]
    changed, confidence_changed = 0, False
    # The text this run's judge was sent, built again the same way (qa.redaction).
    redaction = getattr(run.recording, "redaction", None)
    view = judge_view(transcript=run.recording.transcript, local=run.backend == "local", language=run.rubric.language,
                      llm_spans=redaction.llm_spans if redaction else None)
    for score in scores:
        before = {field: getattr(score, field) for field in fields}
        for field, value in view_verification_fields(
            evidence=score.evidence, view=view, model_confidence=score.model_confidence,
            subject=_subject(score.criterion, score.value), references=references_parse(score.evidence),
        ).items():  # fmt: skip
            setattr(score, field, value)
        if before != {field: getattr(score, field) for field in fields}:
            changed += 1
            confidence_changed |= before["confidence"] != score.confidence
    Score.objects.bulk_update(scores, fields)
    if confidence_changed and run.recording.current_run_id == run.pk:
        recording_route(recording=run.recording, run=run, scores=scores)
    return changed
