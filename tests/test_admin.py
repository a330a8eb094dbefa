"""A smoke test for every ModelAdmin, and the rubric owner's workflow in the admin."""

from collections.abc import Callable

import html
import re

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from intake.models import DropFolder, DroppedFile, TwilioAccount, TwilioRecording
from access.models import SsoIdentity, Workspace
from access.services import member_add
from access.models import ApiKey
from coaching.models import CoachingComment, CoachingSession
from insights.selfreview.models import SelfReview, SelfReviewValue
from django.utils import timezone
from qa.models import Judge, JudgeRun, Recording, Score, Transcription
from qa.redaction.models import RedactionPolicy
from reviews.models import Review
from reviews.services import review_create
from rubrics.models import Rubric
from tests.factories import CriterionExceptionFactory, CriterionFactory, RubricFactory, UserFactory, judged_recording
from webhooks.models import Delivery, Subscription


def _review() -> Review:
    return review_create(recording=judged_recording(), decision="approve", reviewer="s1")


def _subscription() -> Subscription:
    return Subscription.objects.create(url="https://hooks.example.com/in", events=["recording.judged"], secret="s" * 32)


def _delivery() -> Delivery:
    from outbox.models import Event

    event = Event.objects.create(name="recording.judged", subject_type="recording", subject_id=1, recording_id=1)
    return Delivery.objects.create(event=event, subscription=_subscription(), body='{"id": "x"}')


def _coaching() -> CoachingSession:
    recording = judged_recording()
    session = CoachingSession.objects.create(
        workspace_id=recording.workspace_id, rubric=recording.rubric, agent_id=recording.agent_id, team=recording.team,
        coach=UserFactory(), goal="Confirm the amount", follow_up_on=timezone.localdate(),
    )  # fmt: skip
    CoachingComment.objects.create(session=session, author=session.coach, body="A comment")
    return session


def _self_review() -> SelfReview:
    recording = judged_recording()
    review = SelfReview.objects.create(recording=recording, user=UserFactory(), agent_id=recording.agent_id)
    SelfReviewValue.objects.create(self_review=review, criterion=recording.rubric.criteria.first(), value=3)
    return review


def _api_key() -> ApiKey:
    prefix, key = ApiKey.generate()
    return ApiKey.objects.create(name="crm", prefix=prefix, key_hash=ApiKey.hash(key))


def _twilio_account() -> TwilioAccount:
    return TwilioAccount.objects.create(
        workspace=Workspace.objects.create(slug="acme-twilio"), slug="acme-twilio", account_sid="AC" + "1" * 32,
        auth_token_variable="ACME_TWILIO_TOKEN", rubric_slug="care", source="twilio",
    )  # fmt: skip


def _drop_folder() -> DropFolder:
    workspace = Workspace.objects.create(slug="acme-drop")
    return DropFolder.objects.create(workspace=workspace, slug="acme-drop", path="/srv/drops/acme", rubric_slug="care", source="dump")


# One way to make an instance of every model the admin shows. A new
# ModelAdmin without an entry here fails the smoke test until it has one.
INSTANCES: dict[type[Model], Callable[[], Model]] = {
    Workspace: lambda: member_add(
        user=UserFactory(), workspace=Workspace.objects.create(slug="acme", name="ACME"), role="supervisor", teams=["north"]
    ).workspace,
    SsoIdentity: lambda: SsoIdentity.objects.create(user=UserFactory(), issuer="https://sso.example.com", subject="4f1c"),
    Rubric: lambda: CriterionExceptionFactory().criterion.rubric,
    Recording: judged_recording,
    JudgeRun: lambda: judged_recording().current_run,
    Score: lambda: judged_recording().current_run.scores.first(),
    Review: _review,
    ApiKey: _api_key,
    Transcription: lambda: Transcription.objects.create(recording=judged_recording(), status="succeeded"),
    CoachingSession: _coaching,
    SelfReview: _self_review,
    Judge: lambda: Judge.objects.create(name="gpt", model="gpt-4o-mini", api_key_variable="JUDGE_GPT_KEY"),
    Group: lambda: Group.objects.get(name="Supervisors"),
    Subscription: _subscription,
    Delivery: _delivery,
    RedactionPolicy: lambda: RedactionPolicy.objects.create(entity_type="PERSON", action="keep"),
    TwilioAccount: _twilio_account,
    TwilioRecording: lambda: TwilioRecording.objects.create(
        account=_twilio_account(), recording_sid="RE" + "a" * 32, recording_url="https://api.twilio.com/x"
    ),
    DropFolder: _drop_folder,
    DroppedFile: lambda: DroppedFile.objects.create(folder=_drop_folder(), name="call.wav", checksum="sha256:00"),
    # django-axes' records, made as they are: by logging in wrongly, then rightly.
    AccessAttempt: lambda: _log_in("wrong") or AccessAttempt.objects.first(),
    AccessFailureLog: lambda: _log_in("wrong") or AccessFailureLog.objects.first(),
    AccessLog: lambda: _log_in("pass-word-123") or AccessLog.objects.first(),
}


def _log_in(password: str) -> None:
    user = UserFactory(username=f"user-{password}")
    Client(REMOTE_ADDR="203.0.113.5").post(reverse("login"), {"username": user.username, "password": password})


@pytest.fixture
def superuser_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.mark.django_db
def test_the_admin_carries_the_products_name(superuser_client):
    page = superuser_client.get("/admin/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert '<a href="/admin/">Veredicto</a>' in page and "<title>Sitio administrativo | Veredicto</title>" in page
    assert "Django" not in page.split("<body")[1].split("</header>")[0]


@pytest.mark.django_db
@pytest.mark.parametrize("model", list(admin.site._registry), ids=lambda m: m._meta.label)
def test_every_model_admin_lists_searches_and_opens(model, superuser_client, django_user_model):
    model_admin = admin.site._registry[model]
    make = INSTANCES.get(model, lambda: UserFactory() if model is django_user_model else None)
    instance = make()
    assert instance is not None, f"add a way to make a {model._meta.label} to INSTANCES"
    info = model._meta.app_label, model._meta.model_name

    changelist = superuser_client.get(reverse("admin:%s_%s_changelist" % info))
    assert changelist.status_code == 200
    assert str(instance) in changelist.content.decode() or changelist.context["cl"].result_count >= 1
    if model_admin.search_fields:
        assert superuser_client.get(reverse("admin:%s_%s_changelist" % info), {"q": "x"}).status_code == 200

    change = superuser_client.get(reverse("admin:%s_%s_change" % info, args=[instance.pk]))
    assert change.status_code == 200
    add = superuser_client.get(reverse("admin:%s_%s_add" % info))
    assert add.status_code == (200 if model_admin.has_add_permission(change.wsgi_request) else 403)


def owner_client(client):
    client.force_login(UserFactory(is_staff=True, groups=["Rubric owners"]))
    return client


def rubric_form(rubric: Rubric, **changes) -> dict:
    """The admin change form of a draft with its nested inlines, as a browser posts it."""
    criterion = rubric.criteria.get()
    exception = criterion.exceptions.first()
    prefix = "criteria"
    nested = f"{prefix}-0-exceptions"
    data = {
        "name": rubric.name, "slug": rubric.slug, "language": rubric.language, "version": rubric.version,
        "description": "", "review_confidence_threshold": 0.75, "audit_rate": 0.2, "warm_up_judgments": 50,
        "auto_fail": "zero", "not_applicable": "exclude", "route_auto_fail": "on",
        "agreement_target": 0.9, "agreement_risk": 0.1, "agreement_tolerance": "exact",
        "sections-TOTAL_FORMS": 0, "sections-INITIAL_FORMS": 0,
        f"{prefix}-TOTAL_FORMS": 1, f"{prefix}-INITIAL_FORMS": 1,
        f"{prefix}-0-id": criterion.pk, f"{prefix}-0-rubric": rubric.pk, f"{prefix}-0-key": criterion.key,
        f"{prefix}-0-title": criterion.title, f"{prefix}-0-description": criterion.description,
        f"{prefix}-0-evidence_guidance": "", f"{prefix}-0-scale_min": 1, f"{prefix}-0-scale_max": 5,
        f"{prefix}-0-weight": 1, f"{prefix}-0-replaces": "", f"{prefix}-0-order": 1, f"{prefix}-0-subject": criterion.subject,
        f"{nested}-TOTAL_FORMS": 2, f"{nested}-INITIAL_FORMS": 1,
        f"{nested}-0-id": exception.pk, f"{nested}-0-criterion": criterion.pk,
        f"{nested}-0-text": exception.text, f"{nested}-0-outcome": exception.outcome, f"{nested}-0-order": 0,
        f"{nested}-1-text": "The customer hangs up.", f"{nested}-1-outcome": "not_applicable", f"{nested}-1-order": 1,
    }
    data.update(changes)
    return data


@pytest.mark.django_db
def test_rubric_owner_edits_a_draft_with_nested_exceptions_then_publishes_it(client):
    client = owner_client(client)
    rubric = CriterionExceptionFactory(criterion=CriterionFactory(rubric=RubricFactory(slug="care"))).criterion.rubric
    url = reverse("admin:rubrics_rubric_change", args=[rubric.pk])

    response = client.post(url, rubric_form(rubric, **{"criteria-0-title": "Greets warmly"}))
    assert response.status_code == 302, response.context["errors"] if response.context else response
    criterion = rubric.criteria.get()
    assert criterion.title == "Greets warmly"
    assert criterion.exceptions.count() == 2

    # Publish is a button on the rubric's page, behind a confirmation; no list action bypasses it.
    page = client.get(url).content.decode()
    publish = reverse("admin:rubrics_rubric_publish", args=[rubric.pk])
    assert f'href="{publish}"' in page
    assert client.get(reverse("admin:rubrics_rubric_changelist")).context["action_form"] is None
    confirmation = client.get(publish, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "The first version: every criterion is new" in confirmation
    assert client.post(publish, {}).status_code == 200  # warnings not confirmed: asked again
    rubric.refresh_from_db()
    assert rubric.is_draft
    done = client.post(publish, {"confirm_warnings": "1"}, HTTP_ACCEPT_LANGUAGE="es", follow=True)
    assert done.redirect_chain[-1][1] == 302
    rubric.refresh_from_db()
    assert rubric.status == Rubric.Status.PUBLISHED
    # The message says it once, in one language: not "Published Care v1 (Publicada)".
    said = [str(message) for message in done.context["messages"]]
    assert said == [f"Se publicó {rubric.name} v1."], said

    # Published: the page is read-only, offers no delete, and a forged post changes nothing.
    page = client.get(url).content.decode()
    assert 'name="_save"' not in page
    assert reverse("admin:rubrics_rubric_delete", args=[rubric.pk]) not in page
    assert client.post(url, rubric_form(rubric, **{"criteria-0-title": "Sneaky"})).status_code == 403
    assert rubric.criteria.get().title == "Greets warmly"
    assert client.get(publish).status_code == 403

    new_version = reverse("admin:rubrics_rubric_new_version", args=[rubric.pk])
    assert f'href="{new_version}"' in page
    # A new draft is a copy: its confirmation says so, rather than listing the published version's criteria as added.
    asked = client.get(new_version, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "The draft starts as an exact copy of v1" in asked and "Added" not in asked
    assert client.post(new_version).status_code == 302
    draft = Rubric.objects.get(slug="care", version=2)
    assert draft.status == Rubric.Status.DRAFT and draft.criteria.get().exceptions.count() == 2

    # A change of the rubric's own settings is a change: publishing says which, not "nothing changed".
    Rubric.objects.filter(pk=draft.pk).update(audit_rate=1.0, warm_up_judgments=0)
    confirmation = client.get(reverse("admin:rubrics_rubric_publish", args=[draft.pk]), HTTP_ACCEPT_LANGUAGE="en")
    changes = [" ".join(item.split()) for item in re.findall(r'<li class="setting-change">(.*?)</li>', confirmation.content.decode(), re.S)]
    assert changes == ["<strong>Changed:</strong> random audit rate: 0.2 → 1.0", "<strong>Changed:</strong> warm-up judgments: 50 → 0"]


@pytest.mark.django_db
def test_publishing_shows_the_diff_and_errors_block_it(client):
    from rubrics.services import rubric_new_version, rubric_publish

    client = owner_client(client)
    first = RubricFactory(slug="care")
    for key, title in (("greets", "Greets"), ("verifies", "Verifies"), ("closes", "Closes")):
        CriterionExceptionFactory(
            criterion=CriterionFactory(rubric=first, key=key, title=title, description=f"The agent {key} the caller.",
                                       evidence_guidance="Quote it."),
            text="The call drops.",
        )
    rubric_publish(rubric=first)
    draft = rubric_new_version(rubric=first)
    draft.criteria.get(key="closes").delete()
    draft.criteria.filter(key="verifies").update(description="The agent asks for the date of birth.")
    CriterionExceptionFactory(
        criterion=CriterionFactory(rubric=draft, key="thanks", title="Thanks", description="The agent thanks the caller.",
                                   evidence_guidance="Quote it."),
        text="No aplica",
        outcome="not_applicable",
    )
    publish = reverse("admin:rubrics_rubric_publish", args=[draft.pk])

    page = client.get(publish, HTTP_ACCEPT_LANGUAGE="es").content.decode()

    assert "Cambios en v2 respecto de v1" in page
    assert "<strong>Agregado:</strong> <code>thanks</code>" in page
    assert "<strong>Eliminado:</strong> <code>closes</code>" in page
    assert "<strong>Modificado:</strong> <code>verifies</code> Verifies — descripción" in page
    assert "no aplica sin decir cuándo" in page
    assert 'value="Publicar"' not in page  # errors block publishing: no button
    assert client.post(publish, {"confirm_warnings": "1"}).status_code == 200
    draft.refresh_from_db()
    assert draft.is_draft


def _policy_draft() -> Rubric:
    """v1: sections compliance (weight 3) and service (1), criteria debt (compliance) and greets (service);
    its draft v2 changes the policy only: a section renamed and reweighted, one removed, one added, a
    criterion moved and reweighted, another made critical, and the rubric's auto-fail and N/A rules."""
    from rubrics.models import Section
    from rubrics.services import rubric_new_version, rubric_publish

    first = RubricFactory(slug="care")
    compliance = Section.objects.create(rubric=first, key="compliance", title="Compliance", weight=3, order=1)
    service = Section.objects.create(rubric=first, key="service", title="Service", weight=1, order=2)
    for key, title, section in (("debt", "States the debt", compliance), ("greets", "Greets", service)):
        CriterionExceptionFactory(
            criterion=CriterionFactory(rubric=first, key=key, title=title, section=section,
                                       description=f"The agent {key} the caller.", evidence_guidance="Quote it."),
        )  # fmt: skip
    rubric_publish(rubric=first)
    draft = rubric_new_version(rubric=first)
    closing = Section.objects.create(rubric=draft, key="closing", title="Closing", weight=1, order=3)
    draft.sections.filter(key="service").update(title="Customer service", weight=2)
    draft.criteria.filter(key="debt").update(section=closing, weight=2.5)
    draft.sections.filter(key="compliance").delete()
    draft.criteria.filter(key="greets").update(critical=True, fail_at=2)
    Rubric.objects.filter(pk=draft.pk).update(auto_fail="flag", not_applicable="met")
    return draft


def _diff_items(page: str) -> list[str]:
    return [html.unescape(" ".join(re.sub(r"<[^>]+>", "", item).split())) for item in re.findall(r"<li[^>]*>(.*?)</li>", page.split('class="rubric-diff', 1)[1].split("</section>", 1)[0], re.S)]


@pytest.mark.django_db
def test_publishing_lists_the_policy_changes_sections_rules_and_criteria_values(client):
    client = owner_client(client)
    publish = reverse("admin:rubrics_rubric_publish", args=[_policy_draft().pk])

    english = _diff_items(client.get(publish, HTTP_ACCEPT_LANGUAGE="en").content.decode())
    assert english == [
        "Section added: closing Closing (weight 1.0)",
        "Section removed: compliance Compliance",
        "Section changed: service Customer service — title: Service → Customer service, weight: 1.0 → 2.0",
        "Changed: debt States the debt — weight: 1.0 → 2.5, section: compliance → closing",
        "Changed: greets Greets — critical: no → yes, fails at: — → 2",
        "Changed: auto-fail: Zero the call's score → Flag the call and keep the computed score",
        "Changed: not applicable criteria: Leave it out of the weights → Count it as met",
    ]
    spanish = _diff_items(client.get(publish, HTTP_ACCEPT_LANGUAGE="es").content.decode())
    assert spanish == [
        "Sección agregada: closing Closing (peso 1,0)",
        "Sección eliminada: compliance Compliance",
        "Sección modificada: service Customer service — título: Service → Customer service, peso: 1,0 → 2,0",
        "Modificado: debt States the debt — peso: 1,0 → 2,5, sección: compliance → closing",
        "Modificado: greets Greets — crítico: no → sí, falla en: — → 2",
        "Modificado: fallo crítico: Poner a cero la puntuación de la llamada → Marcar la llamada y mantener la "
        "puntuación calculada",
        "Modificado: criterios que no aplican: Excluirlo de los pesos → Contarlo como cumplido",
    ]


@pytest.mark.django_db
def test_the_rubric_page_lists_lint_findings_and_offers_languages_from_a_list(client):
    client = owner_client(client)
    rubric = CriterionFactory(rubric=RubricFactory(slug="care"), key="greets", description="The agent greets properly.",
                              evidence_guidance="Quote it.").rubric

    page = client.get(reverse("admin:rubrics_rubric_change", args=[rubric.pk]), HTTP_ACCEPT_LANGUAGE="es")

    text = page.content.decode()
    assert "Revisión de redacción" in text
    assert "«properly» dice cuán bien" in text
    assert '<select name="language"' in text and '<option value="en">' in text
    assert "Published at" not in text and "Fecha de publicación" in text


@pytest.mark.django_db
def test_supervisors_can_browse_results_but_not_edit_rubrics(client):
    client.force_login(UserFactory(is_staff=True, groups=["Supervisors"]))
    rubric = judged_recording().rubric
    assert client.get(reverse("admin:qa_recording_changelist")).status_code == 200
    assert client.get(reverse("admin:rubrics_rubric_change", args=[rubric.pk])).status_code == 200
    assert client.get(reverse("admin:rubrics_rubric_add")).status_code == 403


@pytest.mark.django_db
def test_a_criterion_is_put_in_one_of_its_own_rubrics_sections(client):
    from rubrics.models import Section

    client = owner_client(client)
    rubric = CriterionExceptionFactory(criterion=CriterionFactory(rubric=RubricFactory(slug="care"))).criterion.rubric
    mine = Section.objects.create(rubric=rubric, key="compliance", title="Compliance", weight=3)
    Section.objects.create(rubric=RubricFactory(slug="other"), key="elsewhere", title="Elsewhere")
    url = reverse("admin:rubrics_rubric_change", args=[rubric.pk])
    page = client.get(url).content.decode()
    assert "Compliance" in page and "Elsewhere" not in page  # the criterion's section choices
    form = rubric_form(
        rubric,
        **{
            "sections-TOTAL_FORMS": 1, "sections-INITIAL_FORMS": 1, "sections-0-id": mine.pk,
            "sections-0-rubric": rubric.pk, "sections-0-key": "compliance", "sections-0-title": "Compliance",
            "sections-0-weight": 3, "sections-0-order": 1, "criteria-0-section": mine.pk,
            "criteria-0-critical": "on", "criteria-0-fail_at": 2, "auto_fail": "flag",
        },
    )  # fmt: skip
    response = client.post(url, form)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    criterion = rubric.criteria.get()
    assert (criterion.section_id, criterion.critical, criterion.fail_at) == (mine.pk, True, 2)
    rubric.refresh_from_db()
    assert rubric.auto_fail == "flag"
