"""The rubric lint on the sample rubrics and on bad criteria written to break each rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import translation

from rubrics.lint import RubricLintError, rubric_lint
from rubrics.rubric_file import rubric_spec_parse
from rubrics.services import rubric_import, rubric_publish
from tests.factories import CriterionExceptionFactory, CriterionFactory, RubricFactory

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "rubrics"


def sample(name: str):
    return rubric_import(spec=rubric_spec_parse((SAMPLES / f"{name}.yaml").read_text(encoding="utf-8")))


def findings_of(rubric) -> set[tuple[str, str]]:
    return {(finding.criterion, finding.rule) for finding in rubric_lint(rubric)}


def test_the_sample_rubrics_show_only_their_real_problems():
    # Each of these tests two behaviours (or, for "closing", says how well instead of what): the
    # lint says so. Every other sample criterion is written as docs/user/rubrics.md asks, and gets nothing.
    assert findings_of(sample("customer-care")) == {
        ("greeting", "two-behaviours"),
        ("closing", "two-behaviours"),
        ("closing", "vague-wording"),
    }
    assert findings_of(sample("soporte-cobranzas")) == {
        ("saludo-identificacion", "two-behaviours"),
        ("confirma-acuerdo", "two-behaviours"),
    }


def bad_rubric():
    """One criterion per rule, each broken in the way the rule looks for; `fine` breaks none."""
    rubric = RubricFactory(slug="bad")

    def criterion(key, description, guidance="Quote the agent's words.", exceptions=(("the call drops", "not_applicable"),),
                  subject="agent", **extra):
        # Titles are the descriptions' first words: near duplicates only where the descriptions are.
        item = CriterionFactory(rubric=rubric, key=key, title=f"{key}: {' '.join(description.split()[:4])}",
                                description=description, evidence_guidance=guidance, subject=subject, **extra)
        for text, outcome in exceptions:
            CriterionExceptionFactory(criterion=item, text=text, outcome=outcome)
        return item

    criterion("fine", "The agent states the refund amount in euros.")
    criterion("coordinated-es", "El agente identifica el problema y ofrece una solución.")
    criterion("coordinated-en", "The agent greets the caller and verifies the account.")
    criterion("addition-es", "El agente resume el caso; además agradece la llamada.")
    criterion("addition-en", "The agent confirms the address as well as the delivery date.")
    criterion("vague-es", "El agente atiende la consulta adecuadamente.")
    criterion("vague-en", "The agent handles the objection professionally.")
    criterion("greeting-en", "The agent opens the call with good morning.")  # a greeting, not praise
    criterion("vague-good", "The agent gives a good answer to the billing question.")
    criterion("no-exceptions", "The agent spells out the ticket number.", exceptions=())
    criterion("repeats", "The agent offers a payment plan with dates.",
              exceptions=(("The agent offers a payment plan with dates", "met"),))
    criterion("no-guidance", "The agent names the branch address.", guidance="")
    criterion("absence-es", "El agente no interrumpe al cliente.", guidance="Cite que no interrumpió al cliente.")
    criterion("absence-en", "The agent never blames the customer.", guidance="Quote that the agent did not blame them.")
    criterion("na-without-situation", "The agent reads the legal disclaimer.", exceptions=(("No aplica", "not_applicable"),))
    criterion("wide-scale", "The agent says the waiting time in minutes.", scale_min=0, scale_max=100)
    criterion("near-duplicate", "The agent says the refund amount in euros.")
    criterion("zero-weight", "The agent spells the customer's surname back.", weight=0)
    # Whose behaviour: the agent acts though the customer is named first; the customer acts; no one is named.
    criterion("subject-agent-es", "Cuando el cliente pregunta por la factura, el agente indica el importe.", subject="any")
    criterion("subject-customer-en", "The customer states the reason for the call.", subject="any")
    criterion("no-one-named", "The hold music stops within two minutes.", subject="any")
    return rubric


EXPECTED = {
    ("coordinated-es", "two-behaviours"),
    ("coordinated-en", "two-behaviours"),
    ("addition-es", "two-behaviours"),
    ("addition-en", "two-behaviours"),
    ("vague-es", "vague-wording"),
    ("vague-en", "vague-wording"),
    ("vague-good", "vague-wording"),
    ("no-exceptions", "no-exceptions"),
    ("repeats", "exception-repeats-description"),
    ("no-guidance", "no-evidence-guidance"),
    ("absence-es", "quotes-an-absence"),
    ("absence-en", "quotes-an-absence"),
    ("na-without-situation", "not-applicable-without-situation"),
    ("wide-scale", "scale"),
    ("near-duplicate", "near-duplicate"),
    ("zero-weight", "zero-weight"),
    ("subject-agent-es", "subject-unstated"),
    ("subject-customer-en", "subject-unstated"),
}


def test_each_rule_catches_its_bad_criterion_and_nothing_else():
    assert findings_of(bad_rubric()) == EXPECTED


def test_severity_and_messages_in_both_languages():
    rubric = bad_rubric()
    with translation.override("en"):
        english = {(f.criterion, f.rule): f for f in rubric_lint(rubric)}
    with translation.override("es"):
        spanish = {(f.criterion, f.rule): f for f in rubric_lint(rubric)}

    errors = {key for key, finding in english.items() if finding.is_error}
    assert errors == {("na-without-situation", "not-applicable-without-situation")}
    assert "does not apply without saying when" in english[("na-without-situation", "not-applicable-without-situation")].message
    assert "no aplica sin decir cuándo" in spanish[("na-without-situation", "not-applicable-without-situation")].message
    assert "«además»" in spanish[("addition-es", "two-behaviours")].message
    assert "what the agent does" in english[("subject-agent-es", "subject-unstated")].message
    assert "Set it to “Customer”" in english[("subject-customer-en", "subject-unstated")].message
    assert "lo que hace el agente" in spanish[("subject-agent-es", "subject-unstated")].message
    assert "«Cliente»" in spanish[("subject-customer-en", "subject-unstated")].message
    for key in english:
        assert english[key].message != spanish[key].message, key


def test_errors_block_publishing_and_warnings_do_not():
    rubric = bad_rubric()
    with pytest.raises(RubricLintError) as raised:
        rubric_publish(rubric=rubric)
    assert [finding.rule for finding in raised.value.findings] == ["not-applicable-without-situation"]
    rubric.refresh_from_db()
    assert rubric.is_draft

    rubric.criteria.get(key="na-without-situation").exceptions.update(text="The caller is a minor.")
    assert rubric_publish(rubric=rubric).status == "published"


def test_lint_rubric_command_exits_1_on_errors(capsys):
    bad_rubric()
    with pytest.raises(CommandError) as exited:
        call_command("lint_rubric", "bad")
    assert exited.value.returncode == 1
    out = capsys.readouterr()
    assert "\nerror na-without-situation [not-applicable-without-situation]" in out.out
    assert "1 error(s), 17 warning(s)" in str(exited.value)


def test_lint_rubric_command_passes_with_warnings_only(capsys):
    sample("customer-care")
    call_command("lint_rubric", "customer-care", "--rubric-version", "1")
    out = capsys.readouterr().out
    assert "closing [vague-wording]" in out
    assert "0 error(s), 3 warning(s)" in out
    with pytest.raises(CommandError, match="No rubric 'customer-care' version 9"):
        call_command("lint_rubric", "customer-care", "--rubric-version", "9")


def test_import_rubric_prints_the_findings(capsys, tmp_path):
    call_command("import_rubric", str(SAMPLES / "soporte-cobranzas.yaml"), "--publish")
    out = capsys.readouterr().out
    assert "confirma-acuerdo [two-behaviours]" in out
    assert "2 lint finding(s)" in out


def test_import_rubric_refuses_to_publish_with_errors(capsys, tmp_path):
    file = tmp_path / "bad.yaml"
    file.write_text(
        "slug: bad\nname: Bad\ncriteria:\n  - key: disclaimer\n    title: Disclaimer\n"
        "    description: The agent reads the legal disclaimer.\n    evidence_guidance: Quote it.\n"
        "    exceptions:\n      - when: not applicable\n        outcome: not_applicable\n"
    )
    with pytest.raises(CommandError, match="lint errors block publishing"):
        call_command("import_rubric", str(file), "--publish")
    assert "disclaimer [not-applicable-without-situation]" in capsys.readouterr().out
    from rubrics.models import Rubric

    assert not Rubric.objects.filter(slug="bad").exists()


def test_a_scale_of_one_point_is_an_error():
    from rubrics.lint import scale
    from rubrics.models import Criterion

    [finding] = scale(Criterion(key="flat", scale_min=3, scale_max=3))
    assert (finding.rule, finding.is_error) == ("scale", True)


def test_replaces_must_name_a_key_of_the_previous_version():
    first = sample("customer-care")
    rubric_publish(rubric=first)
    from rubrics.services import rubric_new_version

    draft = rubric_new_version(rubric=first)
    draft.criteria.filter(key="greeting").update(key="opening", replaces="greeting")
    draft.criteria.filter(key="closing").update(key="goodbye", replaces="farewell")

    found = {(f.criterion, f.rule) for f in rubric_lint(draft) if f.rule == "replaces-unknown"}
    assert found == {("goodbye", "replaces-unknown")}
