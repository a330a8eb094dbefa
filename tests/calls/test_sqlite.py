"""The first-run default, SQLite, still migrates (the full-text column is PostgreSQL's alone) and
finds calls by substring, with the operators the page offers (phrases, `or`, `-word`) and the words marked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
from qa.models import Recording
from qa.search import headlines, recordings_matching, search_enabled
from tests.calls.conftest import ENGLISH, SPANISH
from tests.factories import judged_recording, published_rubric
rubric = published_rubric()
es = judged_recording(rubric=rubric, transcript=SPANISH, language="es")
en = judged_recording(rubric=rubric, transcript=ENGLISH, language="en")
assert not search_enabled()
assert list(recordings_matching(Recording.objects.all(), "FACTURA octubre")) == [es]
assert list(recordings_matching(Recording.objects.all(), "refund")) == [en]
assert list(recordings_matching(Recording.objects.all(), "factura refund")) == []
marked = headlines(Recording.objects.filter(pk=es.pk), "factura")[es.pk]
assert "<mark>factura</mark>" in marked, marked
# The operators the page offers, read as PostgreSQL's websearch_to_tsquery reads them.
lost = judged_recording(rubric=rubric, transcript="AGENT: Your card was lost?\\nCUSTOMER: Yes, lost.\\n", language="en")
card = judged_recording(rubric=rubric, transcript="AGENT: Which card?\\nCUSTOMER: The blue card.\\n", language="en")
def found(words):
    return set(recordings_matching(Recording.objects.all(), words))
assert found("card -lost") == {card}, found("card -lost")
assert found("card or factura") == {card, lost, es}, found("card or factura")
assert found('"dos veces" or refund') == {es, en}
assert found('"veces dos"') == set()
assert found('card -"blue card"') == {lost}
assert found("CARD Or REFUND -lost") == {card, en}
snippets = headlines(Recording.objects.filter(pk__in=[card.pk, es.pk]), 'card or "la factura" -lost')
assert "<mark>card</mark>" in snippets[card.pk] and "lost" not in snippets[card.pk], snippets
assert "<mark>la factura</mark>" in snippets[es.pk], snippets
from django.test import Client
from tests.factories import UserFactory
client = Client(HTTP_ACCEPT_LANGUAGE="en")
client.force_login(UserFactory(groups=["Supervisors"]))
page = client.get("/calls/", {"q": "octubre"}, HTTP_HOST="localhost").content.decode()
assert "the words are found as they are written" in page and "<mark>octubre</mark>" in page, page
print("sqlite ok")
"""


def test_sqlite_migrates_and_searches_by_substring(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'first-run.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "PYTHONPATH": str(ROOT),
    }
    for command in (["migrate", "--verbosity", "0"], ["shell", "-c", SCRIPT]):
        result = subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert "sqlite ok" in result.stdout
