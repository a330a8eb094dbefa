"""Nothing a Spanish-speaking supervisor reads is left in English.

Two checks: the Spanish catalog translates every string (none empty, none fuzzy), and the pages,
rendered in Spanish with Spanish data, show none of the catalog's English source strings, which
catches a string used without its translation (a missing `translate` tag, a label built in code).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings

from qa.models import Recording
from reviews.models import Review
from reviews.services import CriterionAdjustment, review_create
from rubrics.services import rubric_publish
from tests.factories import CriterionExceptionFactory, CriterionFactory, RubricFactory, judged_recording
from tests.review.conftest import client_for, set_evidence

CATALOG = Path(settings.BASE_DIR) / "locale" / "es" / "LC_MESSAGES" / "django.po"
# Bilingual on purpose, in every language: the unverified mark must survive any copy of a page or export.
BILINGUAL = {"NO VERIFICADA / NOT VERIFIED"}
TRANSCRIPT = (
    "AGENTE: Buenas tardes, le atiende Marta de Telco Sur.\n"
    "CLIENTE: Me cobraron dos veces la factura de octubre.\n"
    "AGENTE: Lo siento mucho. Le devuelvo el cobro duplicado hoy antes de las 18.\n"
)


def entries() -> list[polib.POEntry]:
    return [entry for entry in polib.pofile(str(CATALOG)) if not entry.obsolete]


def test_every_string_of_the_spanish_catalog_is_translated():
    missing = [entry.msgid for entry in entries() if not entry.translated() or "fuzzy" in entry.flags]
    assert missing == []


def english_sources() -> list[str]:
    """The English strings a Spanish page must not show: whole literal source strings whose translation
    differs (placeholders and markup cut them into parts, each part long enough to be unmistakable)."""
    found = set()
    for entry in entries():
        translations = [entry.msgstr, *entry.msgstr_plural.values()]
        for source in filter(None, [entry.msgid, entry.msgid_plural]):
            for part in re.split(r"%\(\w+\)s|%s|\{\w+\}|\{\{.*?\}\}|<[^>]+>", source):
                part = part.strip(" .,:;()·“”\"'")
                # One short word may be a name or be Spanish too ("No", "Error"); a phrase cannot.
                unmistakable = " " in part or len(part) >= 10
                if unmistakable and part not in BILINGUAL and not any(part in text for text in translations):
                    found.add(part)
    return sorted(found, key=len, reverse=True)


class VisibleText(HTMLParser):
    """What a person reads: text outside scripts and styles, and the labels of controls."""

    ATTRIBUTES = {"aria-label", "placeholder", "title", "alt", "data-message"}

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in {"script", "style"}:
            self.hidden += 1
        self.parts += [value for name, value in attrs if name in self.ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"}:
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible(page: str) -> str:
    parser = VisibleText()
    parser.feed(page)
    return " ".join(" ".join(parser.parts).split())


@pytest.fixture
def spanish_data(db) -> dict[str, Recording]:
    """A rubric and calls in Spanish, so any English on the page comes from the software."""
    draft = RubricFactory(slug="atencion", name="Atención al cliente", language="es")
    CriterionFactory(
        rubric=draft, key="saludo", title="Saluda por su nombre", description="La agente se presenta.", order=1
    )
    na = CriterionFactory(
        rubric=draft, key="cierre", title="Cierra la llamada", description="La agente se despide.", order=2
    )
    CriterionExceptionFactory(criterion=na, text="El cliente cuelga antes.")
    rubric = rubric_publish(rubric=draft)

    def call(external_id: str, reasons: list[str], **fields) -> Recording:
        return judged_recording(
            rubric=rubric,
            external_id=external_id,
            transcript=TRANSCRIPT,
            review_reasons=reasons,
            status=Recording.Status.IN_REVIEW,
            needs_review=True,
            team="tarjetas",
            agent_name="Marta",
            **fields,
        )

    flagged = call("llamada-1", [Recording.ReviewReason.UNVERIFIED_EVIDENCE], confidence=0.0)
    set_evidence(flagged, "saludo", "le atiende Marta de Telco Sur", rationale="Se presenta.")
    set_evidence(flagged, "cierre", "le llamo mañana sin falta", rationale="Promete llamar.", confidence=0.0)
    finished = call("llamada-2", [Recording.ReviewReason.LOW_CONFIDENCE], confidence=0.4)
    review_create(
        recording=finished,
        decision=Review.Decision.REJECT,
        reviewer="marta",
        reject_reason=Review.RejectReason.UNSUPPORTED_QUOTE,
        criteria=[CriterionAdjustment("saludo", adjusted_value=2, comment="No dice su nombre.")],
    )
    blind = call("llamada-3", [Recording.ReviewReason.RANDOM_AUDIT])
    return {"flagged": flagged, "finished": finished, "blind": blind}


def pages(data: dict[str, Recording]) -> list[str]:
    rubric = "rubric=atencion"
    return [
        "/review/",
        f"/review/{data['flagged'].pk}/",
        f"/review/{data['finished'].pk}/",
        f"/review/{data['finished'].pk}/?new=1",
        f"/review/{data['blind'].pk}/",
        f"/reports/deviation/?{rubric}",
        f"/reports/evidence/?{rubric}",
        f"/reports/deviation/scores/?{rubric}&group=all",
        f"/reports/evidence/scores/?{rubric}&unverified=on",
        f"/reports/deviation/recordings/?{rubric}",
        f"/reports/deviation/?{rubric}&date_from=nope",
    ]


@pytest.mark.django_db
def test_spanish_pages_show_no_english_source_string(supervisor, spanish_data):
    client = client_for(supervisor, language="es")
    sources = english_sources()
    assert "Submit review" not in sources and "Review queue" in sources  # the list is what it should be
    leaks = {}
    for url in pages(spanish_data):
        response = client.get(url)
        assert response.status_code in (200, 400), url
        text = visible(response.content.decode())
        found = [source for source in sources if re.search(rf"(?<!\w){re.escape(source)}(?!\w)", text)]
        if found:
            leaks[url] = found
    assert leaks == {}


@pytest.mark.django_db
def test_a_page_with_an_english_string_fails_the_scan(supervisor, spanish_data):
    """The scan itself: an English label where Spanish belongs is found."""
    page = '<p>Cola de revisión</p><button aria-label="Review queue">x</button>'
    assert [source for source in english_sources() if source in visible(page)] == ["Review queue"]
