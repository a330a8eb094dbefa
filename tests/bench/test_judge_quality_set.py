"""The labelled judge-quality set (bench/judge_quality) is valid: every call loads through `load_samples`
itself, and every label file names each criterion of its call's rubric once, with a value the judge
could give, a deciding turn that exists (the agent's, for an agent criterion) and a reason."""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from access.scope import EVERYTHING
from qa.evidence import SPEAKER_ROLES, parse_turns
from qa.management.commands import load_samples
from qa.models import Recording
from rubrics.selectors import rubric_latest_published

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "bench" / "judge_quality"
SAMPLES = ROOT / "samples"
CALL_KEYS = {"external_id", "rubric", "agent", "team", "channel", "language", "occurred_at", "duration_seconds",
             "transcript_source", "transcript"}
HALVES = {"es": ("soporte-cobranzas", "es"), "en": ("customer-care", "en")}  # id prefix: rubric, language
NOT_APPLICABLE = "n/a"


def calls() -> dict[str, dict]:
    return {path.stem: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((SET / "calls").glob("*.yaml"))}


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys silently: a criterion labelled twice must be an error."""

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        duplicates = {key for key in keys if keys.count(key) > 1}
        if duplicates:
            raise yaml.constructor.ConstructorError(None, None, f"repeated keys {sorted(duplicates)}", node.start_mark)
        return super().construct_mapping(node, deep=deep)


def label_files(folder: str) -> dict[str, dict]:
    return {
        path.stem: yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
        for path in sorted((SET / folder).glob("*.yaml"))
    }


def test_every_call_has_the_samples_shape_and_a_first_label():
    found = calls()
    assert len([name for name in found if name.startswith("jq-es-")]) >= 30
    assert set(label_files("labels")) == set(found)
    for name, call in found.items():
        match = re.fullmatch(r"jq-(es|en)-\d{3}", name)
        assert match, f"{name}: external ids are jq-es-NNN or jq-en-NNN"
        assert call["external_id"] == name
        assert set(call) <= CALL_KEYS and set(call) >= CALL_KEYS - {"duration_seconds"}, name
        assert (call["rubric"], call["language"]) == HALVES[match.group(1)], name
        assert call["transcript_source"] in {"human", "asr"}, name
        assert re.fullmatch(r"jq-ag-\d{2}", call["agent"]["id"]) and call["agent"]["name"], name
        turns = parse_turns(call["transcript"])
        assert 8 <= len(turns) <= 30, f"{name}: {len(turns)} turns"
        # One line per turn: a line without a label would silently join the turn before it.
        assert len(turns) == len(call["transcript"].strip().splitlines()), f"{name}: a line without a speaker label"


@pytest.mark.django_db
def test_the_set_loads_through_load_samples_and_every_label_fits_its_call(tmp_path, monkeypatch):
    # load_samples itself, reading the sample rubrics and the set's calls as its recordings.
    shutil.copytree(SAMPLES / "rubrics", tmp_path / "rubrics")
    shutil.copytree(SET / "calls", tmp_path / "recordings")
    monkeypatch.setattr(load_samples, "SAMPLES", tmp_path)
    call_command("load_samples", stdout=StringIO())
    found = calls()
    loaded = dict(Recording.objects.filter(source="samples").values_list("external_id", "transcript"))
    assert set(loaded) == set(found)

    rubrics = {}
    for slug, _ in HALVES.values():
        rubric = rubric_latest_published(slug=slug, scope=EVERYTHING)
        rubrics[slug] = {criterion.key: criterion for criterion in rubric.criteria.prefetch_related("exceptions")}

    seen: dict[tuple[str, str], set[object]] = defaultdict(set)
    for folder, labeller in (("labels", "A"), ("labels-second", "B")):
        for name, label in label_files(folder).items():
            where = f"{folder}/{name}"
            assert label["external_id"] == name and name in found, f"{where}: no call {name}"
            assert label["labeller"] == labeller, where
            criteria = rubrics[found[name]["rubric"]]
            assert set(label["criteria"]) == set(criteria), f"{where}: one entry per criterion of {found[name]['rubric']}"
            turns = parse_turns(loaded[name])
            for key, entry in label["criteria"].items():
                criterion, value, turn = criteria[key], entry["value"], entry["turn"]
                if value == NOT_APPLICABLE:
                    assert criterion.allows_not_applicable(), f"{where} {key}: n/a, but no exception allows it"
                else:
                    assert isinstance(value, int) and criterion.scale_min <= value <= criterion.scale_max, (
                        f"{where} {key}: {value!r} is neither n/a nor on the scale"
                    )
                if turn is not None:
                    assert isinstance(turn, int) and 1 <= turn <= len(turns), f"{where} {key}: no turn {turn}"
                    if criterion.subject in ("agent", "customer"):
                        speaker = SPEAKER_ROLES.get((turns[turn - 1].speaker or "").lower())
                        assert speaker == criterion.subject, f"{where} {key}: turn {turn} is not the {criterion.subject}'s"
                assert isinstance(entry["why"], str) and entry["why"].strip(), f"{where} {key}: no why"
                if folder == "labels":
                    seen[(found[name]["rubric"], key)].add(value)

    # Every criterion sees a 1, a middle value, a 5 and, where an exception allows it, n/a.
    for (slug, key), values in seen.items():
        criterion = rubrics[slug][key]
        middle = set(range(criterion.scale_min + 1, criterion.scale_max))
        wanted = [criterion.scale_min, criterion.scale_max]
        assert set(wanted) <= values and values & middle, f"{slug} {key}: only {sorted(map(str, values))}"
        if criterion.allows_not_applicable():
            assert NOT_APPLICABLE in values, f"{slug} {key}: never n/a"


def test_the_spanish_half_has_the_hard_cases_the_issue_asks_for():
    spanish = {name: call for name, call in calls().items() if name.startswith("jq-es-")}
    labels = label_files("labels")
    assert sum(call["transcript_source"] == "asr" for call in spanish.values()) >= 3
    assert sum(call["channel"] == "chat" for call in spanish.values()) >= 2
    values = {name: {key: entry["value"] for key, entry in labels[name]["criteria"].items()} for name in spanish}
    # Not collections: both collections criteria n/a.
    assert sum(v["informa-deuda"] == v["ofrece-opciones-pago"] == NOT_APPLICABLE for v in values.values()) >= 3
    # Truncated: the closing cut off.
    assert sum(v["confirma-acuerdo"] == NOT_APPLICABLE for v in values.values()) >= 3
    # Prompt injections, judged as words of the call.
    injected = [name for name, call in spanish.items() if re.search(r"cinco en todo|puntaje 5", call["transcript"])]
    assert len(injected) >= 2
