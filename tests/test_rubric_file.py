from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from rubrics.models import Criterion, Rubric
from rubrics.rubric_file import RubricFileError, rubric_spec_parse

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "rubrics"

VALID = """\
slug: care
name: Care
criteria:
  - key: greets
    title: Greets
    description: The agent greets.
    exceptions:
      - when: The call starts mid-way.
        outcome: not_applicable
  - key: closes
    title: Closes
    description: The agent closes.
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rubric.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.django_db
@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_export_then_import_round_trips_every_sample(sample: Path, tmp_path: Path):
    call_command("import_rubric", str(sample), "--publish", stdout=StringIO())
    spec = rubric_spec_parse(sample.read_text(encoding="utf-8"))

    exported = StringIO()
    call_command("export_rubric", spec.slug, stdout=exported)
    assert rubric_spec_parse(exported.getvalue()) == spec

    call_command("import_rubric", str(write(tmp_path, exported.getvalue())), stdout=StringIO())
    v1, v2 = Rubric.objects.filter(slug=spec.slug).order_by("version")
    assert (v1.status, v2.status, v2.version) == ("published", "draft", 2)
    assert list(v2.criteria.values_list("key", "description")) == list(v1.criteria.values_list("key", "description"))


def test_the_spanish_sample_has_ten_single_behaviour_criteria_each_with_exceptions():
    spec = rubric_spec_parse((SAMPLES / "soporte-cobranzas.yaml").read_text(encoding="utf-8"))
    assert spec.language == "es" and len(spec.criteria) >= 10
    assert all(criterion.exceptions for criterion in spec.criteria)
    solution = next(c for c in spec.criteria if c.key == "solucion-concreta")
    assert any("transfiere" in e.when and e.outcome == "not_applicable" for e in solution.exceptions)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (VALID.replace("name: Care", "name: Care\ncolour: red"), "line 3: unknown field 'colour' in the rubric"),
        (VALID.replace("key: closes", "key: greets"), "line 10: duplicate criterion key 'greets' (first at line 4)"),
        (
            VALID.replace("    description: The agent closes.", "    description: The agent closes.\n    scale_min: 5\n    scale_max: 5"),
            "line 13: criterion 'closes': scale_min (5) must be below scale_max (5)",
        ),
        (VALID.replace("description: The agent greets.", 'description: ""'), "line 6: criterion 'greets': 'description' must be non-empty text"),
        (VALID.replace("    description: The agent closes.\n", ""), "line 10: criterion 'closes': 'description' is required"),
        (VALID.replace("outcome: not_applicable", "outcome: maybe"), "line 9: criterion 'greets': unknown exception outcome 'maybe'"),
        (VALID.replace("name: Care", "name: Care\nname: Again"), "line 3: field 'name' given twice in the rubric"),
        ("slug: care\nname: [unclosed", "not valid YAML"),
        (
            VALID.replace("    description: The agent closes.", "    description: The agent closes.\n    weight: -1"),
            "line 13: criterion 'closes': 'weight' must not be negative",
        ),
        (VALID.replace("    description: The agent closes.", "    description: The agent closes.\n    replaces: Not A Key"), "line 13: criterion 'closes': 'replaces' must be a criterion key"),
        (VALID.replace("name: Care", "name: Care\nwarm_up_judgments: -1"), "line 3: 'warm_up_judgments' must not be negative"),
    ],
)
def test_bad_files_name_the_field_and_line(text: str, message: str):
    with pytest.raises(RubricFileError) as caught:
        rubric_spec_parse(text)
    assert message in str(caught.value)


@pytest.mark.django_db
def test_a_bad_file_imports_nothing(tmp_path: Path):
    bad = VALID.replace("key: closes", "key: greets")
    with pytest.raises(CommandError, match="duplicate criterion key"):
        call_command("import_rubric", str(write(tmp_path, bad)))
    assert not Rubric.objects.exists() and not Criterion.objects.exists()


@pytest.mark.django_db
def test_a_missing_file_and_an_unknown_slug_are_clear_errors(tmp_path: Path):
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_rubric", str(tmp_path / "nope.yaml"))
    with pytest.raises(CommandError, match="No rubric 'nope'"):
        call_command("export_rubric", "nope")


@pytest.mark.django_db
def test_replaces_and_the_warm_up_size_round_trip(tmp_path: Path):
    text = VALID.replace("name: Care", "name: Care\nwarm_up_judgments: 20").replace(
        "    description: The agent closes.", "    description: The agent closes.\n    replaces: says-goodbye"
    )
    (tmp_path / "care.yaml").write_text(text)
    call_command("import_rubric", str(tmp_path / "care.yaml"), stdout=StringIO())
    rubric = Rubric.objects.get(slug="care")
    assert rubric.warm_up_judgments == 20
    assert rubric.criteria.get(key="closes").replaces == "says-goodbye"
    out = StringIO()
    call_command("export_rubric", "care", stdout=out)
    assert "warm_up_judgments: 20" in out.getvalue() and "replaces: says-goodbye" in out.getvalue()
    assert rubric_spec_parse(out.getvalue()) == rubric_spec_parse(text)
