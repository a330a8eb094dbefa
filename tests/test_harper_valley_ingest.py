"""Ingest real contact-center exports (Harper Valley, vendored under tests/data with its notice) as structured
turns, and check that quotes from what a human heard verify against the stored transcript."""

import json
from pathlib import Path

import pytest

from qa.evidence import parse_turns, verify_evidence
from qa.models import Recording
from qa.services import RecordingConflictError, Turn, recording_ingest

CALLS = Path(__file__).resolve().parent / "data" / "harper-valley"


def turns_of(path: Path, version: str) -> list[Turn]:
    return [
        Turn(s["speaker_role"], s[version], s["start_ms"], s["start_ms"] + s["duration_ms"])
        for s in json.loads(path.read_text())
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("path", sorted(CALLS.glob("*.json")), ids=lambda p: p.stem)
def test_a_real_export_ingests_as_timed_turns_and_its_human_quotes_verify(path: Path, rubric):
    segments = json.loads(path.read_text())
    recording, created = recording_ingest(
        external_id=path.stem, source="harper-valley", rubric=rubric, turns=turns_of(path, "human_transcript"),
        transcript_source=Recording.TranscriptSource.HUMAN, language="en", judge=False,
    )
    assert created
    assert len(recording.turns) == len(segments)
    assert recording.turns[0]["end_ms"] - recording.turns[0]["start_ms"] == segments[0]["duration_ms"]
    turns = parse_turns(recording.transcript)
    assert [t.speaker for t in turns] == [s["speaker_role"] for s in segments]

    # Every agent turn of three words or more, quoted as the agent, is found where it was said.
    for segment, turn in zip(segments, turns):
        words = segment["human_transcript"].split()
        if segment["speaker_role"] == "agent" and len(words) >= 3 and "[" not in segment["human_transcript"]:
            check = verify_evidence(f"AGENT: {segment['human_transcript']}", recording.transcript)
            assert check.verified, (segment, check)
            assert turn.start <= check.spans[0][0] and check.spans[-1][1] <= turn.end

    # The ASR version of the same call is a different content: a resend is a conflict, not a silent overwrite.
    asr = turns_of(path, "transcript")
    if asr != turns_of(path, "human_transcript"):
        with pytest.raises(RecordingConflictError, match="different content"):
            recording_ingest(external_id=path.stem, source="harper-valley", rubric=rubric, turns=asr,
                             language="en", judge=False)


def test_the_vendored_calls_and_their_notice_are_here():
    assert len(sorted(CALLS.glob("*.json"))) == 3
    assert "Apache License, Version 2.0" in " ".join((CALLS / "README.md").read_text().split())
