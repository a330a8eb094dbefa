from io import StringIO

import pytest
from django.core.management import call_command

from qa.evidence import parse_turns
from qa.models import JudgeRun, Recording
from rubrics.models import Rubric


@pytest.mark.django_db
def test_load_samples_publishes_the_rubrics_and_loads_every_recording_once():
    call_command("load_samples", stdout=StringIO())
    call_command("load_samples", stdout=StringIO())  # again: nothing new, nothing duplicated

    assert set(Rubric.objects.filter(status="published").values_list("slug", flat=True)) == {
        "soporte-cobranzas",
        "customer-care",
    }
    assert Rubric.objects.count() == 2
    recordings = Recording.objects.all()
    assert recordings.count() >= 10
    assert set(recordings.values_list("language", flat=True)) == {"es", "en"}
    assert recordings.filter(transcript_source="asr").count() >= 3
    assert all(parse_turns(r.transcript)[0].speaker for r in recordings)
    # Left for `judge` to pick up, so a first run judges only what it asks for.
    assert set(recordings.values_list("status", flat=True)) == {Recording.Status.RECEIVED}
    assert not JudgeRun.objects.exists()


@pytest.mark.django_db
def test_unchanged_sample_rubrics_are_not_published_again():
    call_command("load_samples", stdout=StringIO())
    v1 = Rubric.objects.get(slug="customer-care")
    out = StringIO()
    call_command("load_samples", stdout=out)
    assert "up to date" in out.getvalue()
    assert Rubric.objects.filter(slug="customer-care").count() == 1
    assert v1.criteria.count() == 6
