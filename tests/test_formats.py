"""Dates and times as the pages write them: a sentence that ends on a time ends with one period. English's
12-hour clock wrote "2:51 p.m.", and "Reviewed: Approved by sup, 12/03/2026 2:51 p.m.." followed."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from django.template import Context, Template
from django.utils import formats, translation

AFTERNOON = datetime(2026, 12, 3, 14, 51, tzinfo=timezone.utc)


@pytest.mark.parametrize("language", ["en", "es"])
@pytest.mark.parametrize("name", ["SHORT_DATETIME_FORMAT", "DATETIME_FORMAT", "TIME_FORMAT"])
def test_a_time_never_ends_with_a_period(language, name):
    with translation.override(language):
        written = formats.date_format(AFTERNOON, name)
    assert "14:51" in written and not written.endswith("."), written


@pytest.mark.parametrize("language", ["en", "es"])
def test_a_sentence_ending_on_a_time_has_one_period(language):
    template = Template(
        '{% load i18n %}{% blocktranslate with when=moment|date:"SHORT_DATETIME_FORMAT" %}'
        "You acknowledged this review on {{ when }}.{% endblocktranslate %}"
    )
    with translation.override(language), translation.override(language):
        text = template.render(Context({"moment": AFTERNOON}))
    assert text.endswith("14:51.") and ".." not in text, text
