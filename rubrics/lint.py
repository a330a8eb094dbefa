"""The rubric lint: what in a criterion's wording makes a judge (or a supervisor) disagree.

Each rule reads one criterion (or the rubric's criteria together) and returns
findings a rubric owner can act on, in Spanish or English. The rules are
heuristics over the words written, in both languages whatever the rubric's
language, since owners mix them. A warning is published after a confirmation;
an error blocks publishing (see `rubrics.services.rubric_publish`), so errors
are kept for wording that leaves the judge no rule at all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from rubrics.models import Criterion, CriterionException, Rubric


class Severity(models.TextChoices):
    WARNING = "warning", gettext_lazy("Warning")
    ERROR = "error", gettext_lazy("Error")


@dataclass(frozen=True)
class Finding:
    severity: Severity
    rule: str
    message: str  # in the active language
    criterion: str = ""  # the criterion's key; empty for the rubric as a whole

    @property
    def is_error(self) -> bool:
        return self.severity == Severity.ERROR


class RubricLintError(ValidationError):
    """A rubric version with lint errors cannot be published: its wording leaves the judge no rule."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = [finding for finding in findings if finding.is_error]
        super().__init__([f"{finding.criterion or '-'}: {finding.message}" for finding in self.findings])


def _words(text: str) -> list[str]:
    """Lowercase words without accents, so 'Además' and 'ademas' match."""
    plain = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(char for char in plain if not unicodedata.combining(char))
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", plain)


def _phrase_in(phrase: str, words: list[str]) -> bool:
    wanted = _words(phrase)
    return any(words[i : i + len(wanted)] == wanted for i in range(len(words) - len(wanted) + 1))


# --- two behaviours -----------------------------------------------------------

# Always a second behaviour, whatever follows.
ADDITION_MARKERS = ("además", "asimismo", "también", "as well as", "also", "in addition", "y luego", "and then")
CONJUNCTIONS = {"y", "e", "and"}
# Verbs an agent's behaviour is written with; after "y"/"and" they start a second behaviour.
AGENT_VERBS = set(
    _words(
        # Spanish, third person present, and "se" for reflexive verbs ("y se despide").
        "acuerda agradece anota aclara avisa ayuda cierra comunica confirma consulta cumple da deja deriva despide dice"
        " documenta empatiza envia escala escucha explica gestiona identifica indica informa mantiene menciona ofrece"
        " pide pregunta presenta promete propone recomienda reconoce registra resume resuelve revisa saluda se solicita"
        " transfiere usa utiliza valida verifica"
        # English, third person present.
        " acknowledges apologizes asks checks closes confirms documents escalates explains gives greets identifies"
        " informs listens mentions offers promises proposes provides records resolves restates says states summarizes"
        " tells thanks transfers uses verifies"
    )
)


def two_behaviours(criterion: Criterion) -> Iterator[Finding]:
    words = _words(criterion.description)
    marker = next((marker for marker in ADDITION_MARKERS if _phrase_in(marker, words)), None)
    if marker is None:
        marker = next(
            (f"{word} {after}" for word, after in zip(words, words[1:]) if word in CONJUNCTIONS and after in AGENT_VERBS),
            None,
        )
    if marker is not None:
        yield Finding(
            Severity.WARNING,
            "two-behaviours",
            _(
                "The description seems to test two behaviours (“%(marker)s”): a call can meet one and not the other. "
                "Split it into two criteria, each with its own exceptions."
            )
            % {"marker": marker},
            criterion.key,
        )


# --- whose behaviour -----------------------------------------------------------

# Words naming each side of the call, in either language.
ROLE_WORDS = {
    Criterion.Subject.AGENT: set(
        _words(
            "agent agents agente agentes operator operador operadora asesor asesora advisor representative"
            " representante ejecutivo ejecutiva"
        )
    ),
    Criterion.Subject.CUSTOMER: set(
        _words("customer customers caller callers client cliente clientes usuario usuaria llamante")
    ),
}
_NEGATIONS = {"no", "not", "never", "nunca", "does", "doesn't", "doesnt", "se", "le", "lo", "la", "les"}


def _acting(words: list[str], role: str) -> bool:
    """The role is named right before one of the behaviour verbs ("el agente saluda", "the caller says",
    "el agente no amenaza"): it is who acts."""
    for at, word in enumerate(words):
        if word in ROLE_WORDS[role]:
            following = [after for after in words[at + 1 : at + 4] if after not in _NEGATIONS][:1]
            if following and following[0] in AGENT_VERBS:
                return True
    return False


def subject_unstated(criterion: Criterion) -> Iterator[Finding]:
    """A description about the agent (or the customer) with the subject left at `any`: a quote of the
    other side's words would verify. Who acts is the role named before a behaviour verb; failing that,
    the agent when named (a QA criterion judges the agent), else the customer."""
    if criterion.subject != Criterion.Subject.ANY:
        return
    words = _words(criterion.description)
    named = [role for role, names in ROLE_WORDS.items() if names & set(words)]
    if not named:
        return
    acting = [role for role in named if _acting(words, role)]
    role = acting[0] if len(acting) == 1 else named[0]
    messages = {
        Criterion.Subject.AGENT: _(
            "The description is about what the agent does, but whose behaviour the criterion judges is “%(any)s”: "
            "a quote of only the customer's words would verify. Set it to “%(subject)s”."
        ),
        Criterion.Subject.CUSTOMER: _(
            "The description is about what the customer does, but whose behaviour the criterion judges is "
            "“%(any)s”: a quote of only the agent's words would verify. Set it to “%(subject)s”."
        ),
    }
    yield Finding(
        Severity.WARNING,
        "subject-unstated",
        messages[role] % {"any": Criterion.Subject.ANY.label, "subject": Criterion.Subject(role).label},
        criterion.key,
    )


# --- vague wording ------------------------------------------------------------

VAGUE_WORDS = (
    "adecuadamente", "adecuado", "adecuada", "correctamente", "de forma correcta", "de manera correcta",
    "de forma apropiada", "de manera apropiada", "apropiadamente", "bien", "profesional", "profesionalmente",
    "amablemente", "cordialmente",
    "properly", "appropriately", "appropriate", "adequately", "correctly", "good", "well", "professional",
    "professionally", "politely", "nicely",
)  # fmt: skip


GREETINGS = ("good morning", "good afternoon", "good evening", "good day", "good night")


def vague_wording(criterion: Criterion) -> Iterator[Finding]:
    words = _words(criterion.description)
    # "as well as" is a second behaviour, not praise; "good morning" is a greeting a quote can show.
    text = " ".join(words).replace("as well as", "")
    for greeting in GREETINGS:
        text = text.replace(greeting, "")
    found = [word for word in VAGUE_WORDS if _phrase_in(word, text.split())]
    if found:
        yield Finding(
            Severity.WARNING,
            "vague-wording",
            _(
                "“%(words)s” says how well, not what happens: no quote can show it. "
                "Write the behaviour a transcript would show instead."
            )
            % {"words": "”, “".join(found)},
            criterion.key,
        )


# --- exceptions ---------------------------------------------------------------

# Texts that name no situation: "does not apply" when... what?
NO_SITUATION = [
    _words(text)
    for text in (
        "no aplica", "cuando no aplica", "si no aplica", "no corresponde", "cuando no corresponde", "si no corresponde",
        "n/a", "na", "not applicable", "does not apply", "when it does not apply", "if it does not apply",
        "if not applicable", "when not applicable", "when not relevant", "if not relevant", "no es relevante",
    )
]  # fmt: skip


def _similarity(first: str, second: str) -> float:
    """Share of content words two texts have in common (Jaccard over words of 4+ letters)."""
    a = {word for word in _words(first) if len(word) > 3}
    b = {word for word in _words(second) if len(word) > 3}
    return len(a & b) / len(a | b) if a and b else 0.0


def exceptions_written(criterion: Criterion) -> Iterator[Finding]:
    exceptions = list(criterion.exceptions.all())
    if not exceptions:
        yield Finding(
            Severity.WARNING,
            "no-exceptions",
            _(
                "No exceptions are written out. Say what happens when the call is transferred, drops, or the "
                "behaviour has no occasion: otherwise the judge decides, and a supervisor rejects."
            ),
            criterion.key,
        )
    for exception in exceptions:
        words = _words(exception.text)
        if exception.outcome == CriterionException.Outcome.NOT_APPLICABLE and words in NO_SITUATION:
            yield Finding(
                Severity.ERROR,
                "not-applicable-without-situation",
                _(
                    "The exception “%(text)s” says the criterion does not apply without saying when: "
                    "describe the situation in the call (e.g. “the caller asks to be transferred”)."
                )
                % {"text": exception.text},
                criterion.key,
            )
        elif _similarity(exception.text, criterion.description) >= 0.6:
            yield Finding(
                Severity.WARNING,
                "exception-repeats-description",
                _(
                    "The exception “%(text)s” repeats the description instead of naming a situation "
                    "where the usual rule does not hold."
                )
                % {"text": exception.text},
                criterion.key,
            )


# --- evidence guidance --------------------------------------------------------

ABSENCE = re.compile(
    r"\b(cite|citar|citen|quote)\b[^.;]*\b(que no|ausencia|falta de|that (?:the agent )?(?:did not|didn't|does not|"
    r"doesn't|never)|the absence|the lack)\b"
)
INSTEAD = re.compile(r"\b(si no|en su lugar|en cambio|otherwise|instead|if not|if there is none|if none)\b")


def evidence_guidance(criterion: Criterion) -> Iterator[Finding]:
    guidance = " ".join(_words(criterion.evidence_guidance))
    if not guidance:
        yield Finding(
            Severity.WARNING,
            "no-evidence-guidance",
            _("No evidence guidance: say which words of the call the judge should quote for this criterion."),
            criterion.key,
        )
    elif ABSENCE.search(guidance) and not INSTEAD.search(guidance):
        yield Finding(
            Severity.WARNING,
            "quotes-an-absence",
            _(
                "The evidence guidance asks to quote something that did not happen; no quote can show an absence. "
                "Say what to quote instead (e.g. the turn where it would have happened)."
            ),
            criterion.key,
        )


# --- scale --------------------------------------------------------------------


def scale(criterion: Criterion) -> Iterator[Finding]:
    if criterion.scale_max <= criterion.scale_min:
        yield Finding(
            Severity.ERROR,
            "scale",
            _("The scale %(low)s–%(high)s has fewer than two points: there is nothing to judge.")
            % {"low": criterion.scale_min, "high": criterion.scale_max},
            criterion.key,
        )
    elif criterion.scale_max - criterion.scale_min > 9:
        yield Finding(
            Severity.WARNING,
            "scale",
            _(
                "The scale %(low)s–%(high)s has more points than a quote can tell apart; judges and supervisors "
                "will disagree on the steps. Use at most ten."
            )
            % {"low": criterion.scale_min, "high": criterion.scale_max},
            criterion.key,
        )


def weight(criterion: Criterion) -> Iterator[Finding]:
    if criterion.weight == 0:
        yield Finding(
            Severity.WARNING,
            "zero-weight",
            _("The weight is 0: the criterion counts in no overall score. Remove it, or give it a weight."),
            criterion.key,
        )


def critical_unambiguous(criterion: Criterion) -> Iterator[Finding]:
    """A critical criterion fails the whole call: its exceptions and what to quote must leave no doubt."""
    if not criterion.critical:
        return
    missing = []
    if not list(criterion.exceptions.all()):
        missing.append(_("no exceptions"))
    if not criterion.evidence_guidance.strip():
        missing.append(_("no evidence guidance"))
    if missing:
        yield Finding(
            Severity.WARNING,
            "critical-ambiguous",
            _(
                "A critical criterion fails the whole call, but it has %(missing)s: write out when it does not "
                "apply and what to quote, so that an auto-fail is never a judgment call."
            )
            % {"missing": _(" and ").join(missing)},
            criterion.key,
        )


# --- the rubric as a whole ----------------------------------------------------


def section_weights(rubric: Rubric, criteria: list[Criterion]) -> Iterator[Finding]:
    """A section whose weight, or whose criteria's weights, are all 0 counts in no call's quality score."""
    for section in rubric.sections.all():
        inside = [criterion for criterion in criteria if criterion.section_id == section.pk]
        if section.weight == 0 or not any(criterion.weight > 0 for criterion in inside):
            yield Finding(
                Severity.WARNING,
                "section-zero-weight",
                _("The section “%(title)s” weighs 0 in the quality score (its weight, or all its criteria's, is 0).")
                % {"title": section.title},
            )
    if rubric.sections.exists():
        for criterion in criteria:
            if criterion.section_id is None:
                yield Finding(
                    Severity.WARNING,
                    "no-section",
                    _("The rubric has sections but this criterion is in none: it counts as a section of its own."),
                    criterion.key,
                )


def near_duplicates(criteria: list[Criterion]) -> Iterator[Finding]:
    for first, second in combinations(criteria, 2):
        if _similarity(first.title, second.title) >= 0.6 or _similarity(first.description, second.description) >= 0.6:
            yield Finding(
                Severity.WARNING,
                "near-duplicate",
                _("“%(first)s” and “%(second)s” say nearly the same: a call would be scored twice for one behaviour.")
                % {"first": first.title, "second": second.title},
                second.key,
            )


def replaces_known(criteria: list[Criterion], previous: Rubric | None) -> Iterator[Finding]:
    keys = set(previous.criteria.values_list("key", flat=True)) if previous is not None else set()
    for criterion in criteria:
        if criterion.replaces and criterion.replaces not in keys:
            yield Finding(
                Severity.WARNING,
                "replaces-unknown",
                _("It replaces “%(key)s”, which the previous version does not have: the versions report cannot link them.")
                % {"key": criterion.replaces},
                criterion.key,
            )


CRITERION_RULES: tuple[Callable[[Criterion], Iterable[Finding]], ...] = (
    two_behaviours,
    subject_unstated,
    vague_wording,
    exceptions_written,
    evidence_guidance,
    scale,
    weight,
    critical_unambiguous,
)


def rubric_lint(rubric: Rubric) -> list[Finding]:
    """Every finding on a rubric version: the criteria's in their order, errors first within each."""
    criteria = list(rubric.criteria.prefetch_related("exceptions"))
    findings = [finding for criterion in criteria for rule in CRITERION_RULES for finding in rule(criterion)]
    findings += near_duplicates(criteria)
    findings += replaces_known(criteria, rubric.previous_version())
    findings += section_weights(rubric, criteria)
    order = {criterion.key: position for position, criterion in enumerate(criteria)}
    return sorted(findings, key=lambda finding: (order.get(finding.criterion, -1), not finding.is_error))
