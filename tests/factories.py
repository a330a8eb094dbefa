"""factory_boy factories for the domain. Rubrics are built as drafts; use
`published_rubric()` for one that recordings can point at."""

from __future__ import annotations

import factory
from django.contrib.auth.models import Group, User
from django.utils import timezone

from access.models import Membership, Role, default_workspace_id, role_of_groups
from qa.models import JudgeRun, Recording, Score, values_by_key
from rubrics.models import Criterion, CriterionException, Rubric
from rubrics.services import rubric_publish

SAMPLE_TRANSCRIPT = (
    "AGENTE: Buenas tardes, le atiende Marta de Telco Sur. ¿En qué puedo ayudarle?\n"
    "CLIENTE: Hola, me cobraron dos veces la factura de octubre.\n"
    "AGENTE: Entiendo. Para confirmar, ¿el cobro duplicado es de la factura de octubre?\n"
    "CLIENTE: Sí, exactamente, y encima me lo cobraron con recargo.\n"
    "AGENTE: Sí, te lo mando hoy antes de las 18 por correo, con el número de reclamo.\n"
    "CLIENTE: Perfecto, muchas gracias.\n"
)


class RubricFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rubric

    name = factory.Sequence(lambda n: f"Rubric {n}")
    slug = factory.Sequence(lambda n: f"rubric-{n}")
    language = "es"


class CriterionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Criterion

    rubric = factory.SubFactory(RubricFactory)
    key = factory.Sequence(lambda n: f"criterion-{n}")
    title = factory.Sequence(lambda n: f"Criterion {n}")
    description = "The agent does one observable thing."
    evidence_guidance = "Quote the agent's words."
    order = factory.Sequence(lambda n: n)


class CriterionExceptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CriterionException

    criterion = factory.SubFactory(CriterionFactory)
    text = "The customer asks to be transferred."
    outcome = CriterionException.Outcome.NOT_APPLICABLE


def published_rubric(*, criteria: int = 3, not_applicable: tuple[str, ...] = (), **fields) -> Rubric:
    """A published rubric with `criteria` criteria keyed c1, c2, ... on a 1–5 scale;
    those keyed in `not_applicable` have a "not applicable" exception."""
    rubric = RubricFactory(**fields)
    for index in range(1, criteria + 1):
        criterion = CriterionFactory(rubric=rubric, key=f"c{index}", title=f"Criterion {index}", order=index)
        if criterion.key in not_applicable:
            CriterionExceptionFactory(criterion=criterion)
    return rubric_publish(rubric=rubric)


class RecordingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Recording

    external_id = factory.Sequence(lambda n: f"call-{n}")
    source = "test"
    agent_id = "agent-1"
    agent_name = "Marta"
    team = "support"
    language = "es"
    occurred_at = factory.LazyFunction(timezone.now)
    transcript = SAMPLE_TRANSCRIPT
    content_hash = factory.Sequence(lambda n: f"{n:064x}")
    rubric = factory.LazyFunction(published_rubric)


class JudgeRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = JudgeRun

    recording = factory.SubFactory(RecordingFactory)
    rubric = factory.SelfAttribute("recording.rubric")
    backend = "openai"
    model = "test-model"
    prompt_version = "test"
    status = JudgeRun.Status.SUCCEEDED


class ScoreFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Score

    run = factory.SubFactory(JudgeRunFactory)
    value = 4
    confidence = 0.9
    model_confidence = 0.9
    evidence = "te lo mando hoy antes de las 18"
    evidence_verified = True
    verification_status = "verified"
    verifier_version = "test"
    rationale = "The agent commits to a time."


def judged_recording(*, values: dict[str, int] | None = None, confidence: float = 0.9, **fields) -> Recording:
    """A recording with one succeeded run scoring every criterion of its rubric."""
    recording = RecordingFactory(**{"status": Recording.Status.JUDGED, **fields})
    run = JudgeRunFactory(recording=recording)
    for criterion in recording.rubric.criteria.all():
        value = (values or {}).get(criterion.key, 4)
        ScoreFactory(run=run, criterion=criterion, value=value, confidence=confidence, model_confidence=confidence)
    recording.current_run = run
    recording.lowest_confidence = confidence
    recording.current_values = values_by_key(run.scores.select_related("criterion"))
    recording.rollup_stale = True  # as the judging marks the values it sets
    recording.save(update_fields=["current_run", "lowest_confidence", "current_values", "rollup_stale"])
    return recording


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "pass-word-123")

    @factory.post_generation
    def groups(self, create: bool, names: list[str] | None, **kwargs) -> None:
        """The role groups named, and the membership of the default workspace they give (as the
        workspaces' migration gave every existing person): a supervisor sees the default workspace's calls."""
        if create and names:
            self.groups.add(*Group.objects.filter(name__in=names))
            role = role_of_groups(set(names))
            if role is not None:
                Membership.objects.get_or_create(
                    user=self, workspace_id=default_workspace_id(), defaults={"role": role, "agent_id": self.username if role == Role.AGENT else ""}
                )
        if create:
            self.save()
