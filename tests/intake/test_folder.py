"""Drop folders, a local folder and an S3 bucket on moto's standalone server (S3's HTTP API on loopback,
reached by the real boto3 client): each audio file with its manifest entry ingested once, a failing file
moved aside with its reason, a malformed manifest refused with a clear one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from core.jobs import Outcome
from intake.folders import dropped_file_execute, folder_scan
from intake.models import DropFolder, DroppedFile
from qa.models import Recording

pytestmark = pytest.mark.django_db


def run_jobs() -> list[Outcome]:
    """What a worker does with the published jobs (the tests' database transaction publishes nothing)."""
    return [dropped_file_execute(job_id=pk).outcome for pk in DroppedFile.objects.filter(status="pending").values_list("pk", flat=True)]


@pytest.fixture
def local_folder(acme, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INTAKE_FOLDER_ROOTS = [str(tmp_path / "drops")]
    inbox = tmp_path / "drops" / "acme"
    inbox.mkdir(parents=True)
    folder = DropFolder(workspace=acme[0], slug="acme-drop", kind="local", path=str(inbox), rubric_slug="care", source="nightly-dump")
    folder.full_clean()
    folder.save()
    return folder


def drop(folder_path, stereo_wav, name: str, manifest: dict | str | None = None):
    shutil.copy(stereo_wav, folder_path / name)
    if manifest is not None:
        stem = name.rsplit(".", 1)[0]
        (folder_path / f"{stem}.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))


def test_a_file_with_its_sidecar_is_ingested_once_and_moved_to_done(local_folder, stereo_wav):
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "call-1.wav", {"external_id": "five9-881", "agent": "ag-7", "team": "north",
                                         "agent_channel": "right", "occurred_at": "2026-11-30T09:15:00+01:00"})  # fmt: skip
    drop(inbox, stereo_wav, "call-2.wav")  # its sidecar not there yet: not complete, left alone
    assert folder_scan(folder=local_folder) == 1
    assert folder_scan(folder=local_folder) == 0  # seen again: the same job
    assert run_jobs() == [Outcome.SUCCEEDED]
    recording = Recording.objects.get()
    assert (recording.source, recording.external_id, recording.agent_id, recording.team) == ("nightly-dump", "five9-881", "ag-7", "north")
    assert (recording.audio_channels, recording.agent_channel) == (2, "right")
    assert recording.occurred_at.isoformat() == "2026-11-30T08:15:00+00:00"
    assert sorted(path.name for path in inbox.iterdir()) == ["call-2.wav", "done"]
    assert sorted(path.name for path in (inbox / "done").iterdir()) == ["call-1.json", "call-1.wav"]
    # The same file dropped again (same name, same content): not ingested again, moved aside as before.
    drop(inbox, stereo_wav, "call-1.wav", {"external_id": "five9-881", "agent": "ag-7", "team": "north"})
    assert folder_scan(folder=local_folder) == 0
    assert Recording.objects.count() == 1 and not (inbox / "call-1.wav").exists()


def test_a_csv_manifest_lists_the_files(local_folder, stereo_wav):
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "a.wav")
    drop(inbox, stereo_wav, "b.wav")
    (inbox / "manifest.csv").write_text(
        "file,external_id,agent,team,rubric,agent_channel,customer_channel\n"
        "a.wav,ext-a,ag-1,north,care,left,right\nb.wav,ext-b,ag-2,south,care,2,1\n"
    )
    assert folder_scan(folder=local_folder) == 2
    assert run_jobs() == [Outcome.SUCCEEDED, Outcome.SUCCEEDED]
    got = {r.external_id: (r.agent_id, r.team, r.agent_channel) for r in Recording.objects.all()}
    assert got == {"ext-a": ("ag-1", "north", "left"), "ext-b": ("ag-2", "south", "right")}


@pytest.mark.parametrize(
    ("manifest", "reason"),
    [
        ("{not json", "The sidecar bad.json is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)."),
        ({"agent": "ag-1", "shift": "night"}, "manifest: Unknown field(s) shift in the manifest entry of bad.wav; the fields are: agent, agent_channel, agent_name, customer_channel, external_id, language, occurred_at, rubric, team."),
        (["ag-1"], "manifest: The manifest entry of bad.wav is not an object of fields."),
        ({"agent_channel": "middle"}, "agent_channel: agent_channel of bad.wav is 'left', 'right' or a channel's number, from 1."),
        ({"occurred_at": "yesterday"}, "occurred_at: occurred_at of bad.wav is not an ISO 8601 time with its offset: 'yesterday'."),
        ({"rubric": "nope"}, "rubric: No published rubric 'nope' in this workspace."),
        ({"agent": {"id": 1}}, "agent: agent of bad.wav must be text, not dict."),
    ],
)
def test_a_file_that_fails_is_moved_aside_with_its_reason(local_folder, stereo_wav, manifest, reason):
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "bad.wav", manifest)
    assert folder_scan(folder=local_folder) == 1
    assert run_jobs() == [Outcome.FAILED]
    assert not Recording.objects.exists()
    assert DroppedFile.objects.get().error == reason
    assert sorted(path.name for path in (inbox / "failed").iterdir()) == ["bad.json", "bad.wav", "bad.wav.reason.txt"]
    assert (inbox / "failed" / "bad.wav.reason.txt").read_text() == reason + "\n"
    assert sorted(path.name for path in inbox.iterdir()) == ["failed"]


def test_audio_the_ingest_refuses_is_moved_aside_with_its_reason(local_folder, tmp_path):
    inbox = Path(local_folder.path)
    (inbox / "noise.wav").write_bytes(b"RIFF this is not audio")
    (inbox / "noise.json").write_text("{}")
    folder_scan(folder=local_folder)
    assert run_jobs() == [Outcome.FAILED]
    reason = (inbox / "failed" / "noise.wav.reason.txt").read_text()
    assert reason.startswith("audio: ") and DroppedFile.objects.get().error == reason.strip()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("name,agent\na.wav,ag-1\n", "The manifest list.csv is malformed: it has no 'file' column (its columns: name, agent)."),
        ("file,shift\na.wav,night\n", "The manifest list.csv is malformed: unknown column(s) shift; the columns are: file, agent, agent_channel, agent_name, customer_channel, external_id, language, occurred_at, rubric, team."),
        ("file,agent\na.wav,ag-1\na.wav,ag-2\n", "The manifest list.csv is malformed: a.wav is listed twice."),
        ("file,agent\na.wav,ag-1,extra\n", "The manifest list.csv is malformed: line 2 has more values than columns."),
    ],
)
def test_a_malformed_csv_manifest_is_refused_with_its_reason_and_its_files_wait(local_folder, stereo_wav, content, reason):
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "a.wav")
    (inbox / "list.csv").write_text(content)
    assert folder_scan(folder=local_folder) == 0
    assert (inbox / "failed" / "list.csv.reason.txt").read_text() == reason + "\n"
    assert (inbox / "a.wav").exists() and not DroppedFile.objects.exists()


def test_a_crash_after_the_ingest_and_before_the_move_is_finished_by_the_next_scan(local_folder, stereo_wav, monkeypatch):
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "call.wav", {})
    folder_scan(folder=local_folder)
    import intake.folders

    def dies(**kwargs):
        raise SystemExit("the worker died here")

    monkeypatch.setattr(intake.folders, "dropped_file_move", dies)
    with pytest.raises(SystemExit):
        run_jobs()
    monkeypatch.undo()
    assert (inbox / "call.wav").exists() and DroppedFile.objects.get().status == "succeeded"
    assert folder_scan(folder=local_folder) == 0  # it moves the file; it does not ingest it again
    assert (inbox / "done" / "call.wav").exists() and Recording.objects.count() == 1
    assert DroppedFile.objects.get().moved


def test_a_file_changed_after_it_was_seen_is_not_ingested_as_what_was_seen(local_folder, stereo_wav, mono_wav):
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "call.wav", {})
    folder_scan(folder=local_folder)
    shutil.copy(mono_wav, inbox / "call.wav")  # overwritten before the worker reached it
    [outcome] = run_jobs()
    assert outcome is Outcome.FAILED and not Recording.objects.exists()
    assert DroppedFile.objects.get().error == "call.wav changed after it was seen; the changed file is a job of its own."
    assert (inbox / "call.wav").exists()  # not moved aside: it is not the file that failed
    assert folder_scan(folder=local_folder) == 1  # the new content is a job of its own
    job = DroppedFile.objects.get(status="pending", attempts=0)
    assert dropped_file_execute(job_id=job.pk).outcome is Outcome.SUCCEEDED
    assert Recording.objects.get().audio_channels == 1


def test_a_folder_outside_the_allowed_roots_is_refused(acme, settings, tmp_path):
    settings.INTAKE_FOLDER_ROOTS = [str(tmp_path / "drops")]
    for path, message in (
        (str(tmp_path / "elsewhere"), "is not inside a folder the operator allowed: add it to INTAKE_FOLDER_ROOTS"),
        (str(tmp_path / "drops" / ".." / "etc"), "is not inside a folder the operator allowed"),
        ("relative/path", "Give the folder's absolute path."),
    ):
        folder = DropFolder(workspace=acme[0], slug="x", kind="local", path=path, rubric_slug="care", source="s")
        with pytest.raises(ValidationError, match=message):
            folder.full_clean()


def test_a_file_larger_than_the_audio_limit_is_refused_before_it_is_read(local_folder, stereo_wav, settings):
    settings.QA_AUDIO_MAX_BYTES = 1000
    inbox = Path(local_folder.path)
    drop(inbox, stereo_wav, "long.wav", {})
    folder_scan(folder=local_folder)
    assert run_jobs() == [Outcome.FAILED]
    assert (inbox / "failed" / "long.wav.reason.txt").read_text() == "long.wav is larger than QA_AUDIO_MAX_BYTES (1000 bytes).\n"



@pytest.mark.parametrize("example", ["json", "text"])
def test_the_pages_sidecar_and_csv_manifest_are_ingested_as_written(local_folder, stereo_wav, acme, example):
    """The examples of docs/operations/intake-folder.md's "Dropping files", dropped as written there."""
    from tests.factories import published_rubric
    from tests.support.docs import docs_blocks, docs_section

    published_rubric(slug="customer-care", workspace=acme[0], language="en")
    [block] = docs_blocks(docs_section("docs/operations/intake-folder.md", "Dropping files"), example)
    inbox = Path(local_folder.path)
    if example == "json":
        drop(inbox, stereo_wav, "call-1.wav", block.code)
    else:
        for name in ("call-1.wav", "call-2.wav"):
            drop(inbox, stereo_wav, name)
        (inbox / "manifest.csv").write_text(block.code)
    assert run_jobs() == [] and folder_scan(folder=local_folder) == (1 if example == "json" else 2)
    assert set(run_jobs()) == {Outcome.SUCCEEDED}
    got = {r.external_id: (r.agent_id, r.team, r.agent_channel, r.rubric.slug, r.language) for r in Recording.objects.all()}
    if example == "json":
        assert got == {"five9-881": ("ag-7", "north", "left", "customer-care", "es")}
        recording = Recording.objects.get()
        assert (recording.agent_name, recording.occurred_at.isoformat()) == ("Marta", "2026-11-30T08:15:00+00:00")
    else:
        assert got == {
            "five9-881": ("ag-7", "north", "left", "customer-care", "en"),
            "five9-882": ("ag-9", "south", "right", "customer-care", "en"),
        }
