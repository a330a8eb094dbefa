"""Drop folders (a local folder, an S3 bucket, a folder on an SFTP server): a contact center drops
recordings, each with its manifest entry (a sidecar `<name>.json` beside `<name>.wav`, or a row of a
`*.csv` manifest in the folder), and Celery beat's scan (every INTAKE_SCAN_INTERVAL) ingests each file
once.

The scan only records: each audio file with its manifest entry becomes a job (idempotent on the folder,
the file's name and its checksum, so the same file seen again is the same job) published after commit.
A worker claims the job with a lease, downloads the file, checks it is the file the scan saw, and
ingests it and marks the job succeeded in one transaction; then it moves the file into `done/`. A file
that cannot be ingested (a malformed manifest, audio the ingest refuses) fails for good and is moved
into `failed/` with `<name>.reason.txt` beside it saying why. A worker that dies mid-file loses nothing:
the sweep takes the job back when its lease runs out; a death after the commit and before the move
leaves a finished job whose file the next scan moves.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
from datetime import datetime
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.errors import ConflictError, InvalidInputError
from core.jobs import (
    Outcome,
    Result,
    job_claim,
    job_fail,
    job_give_back,
    job_interrupted,
    job_succeed,
    jobs_due,
    lease_kept,
)
from intake.jobs import FileGone, Held, IntakeError, IntakeJobs, audio_call_ingest, job_publish, refusal_text
from intake.models import DropFolder, DroppedFile, folder_problems
from intake.stores import Entry, Store, store_for
from qa.audio import channel_number

logger = logging.getLogger(__name__)

AUDIO_EXTENSIONS = {".wav", ".mp3", ".flac", ".ogg", ".opus", ".m4a", ".webm"}
DONE, FAILED = "done", "failed"
# A manifest entry's fields; `file` names the audio file in a CSV manifest (a sidecar is beside it).
FIELDS = {"external_id", "agent", "agent_name", "team", "rubric", "agent_channel", "customer_channel", "language", "occurred_at"}
CSV_FIELDS = FIELDS | {"file"}


class DroppedFiles(IntakeJobs):
    model = DroppedFile
    noun = "dropped file"


KIND = DroppedFiles()


def _is_audio(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in AUDIO_EXTENSIONS


def _sidecar(name: str) -> str:
    return f"{PurePosixPath(name).stem}.json"


def manifest_entry_check(entry: object, *, file: str) -> dict[str, str]:
    """A manifest entry as strings by field, or InvalidInputError naming what is wrong with it."""
    if not isinstance(entry, dict):
        raise InvalidInputError({"manifest": f"The manifest entry of {file} is not an object of fields."})
    unknown = sorted(set(entry) - CSV_FIELDS)
    if unknown:
        raise InvalidInputError(
            {"manifest": f"Unknown field(s) {', '.join(unknown)} in the manifest entry of {file}; "
                         f"the fields are: {', '.join(sorted(FIELDS))}."}
        )  # fmt: skip
    checked = {}
    for field, value in entry.items():
        if field == "file":
            continue
        if value is None:
            value = ""
        if not isinstance(value, str | int):
            raise InvalidInputError({field: f"{field} of {file} must be text, not {type(value).__name__}."})
        checked[field] = str(value).strip()
    for field in ("agent_channel", "customer_channel"):
        if checked.get(field) and channel_number(checked[field]) is None:
            raise InvalidInputError({field: f"{field} of {file} is 'left', 'right' or a channel's number, from 1."})
    if checked.get("occurred_at") and _when(checked["occurred_at"]) is None:
        raise InvalidInputError(
            {"occurred_at": f"occurred_at of {file} is not an ISO 8601 time with its offset: '{checked['occurred_at']}'."}
        )
    return checked


def _when(text: str) -> datetime | None:
    try:
        when = parse_datetime(text)
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def _csv_manifests(store: Store, entries: list[Entry]) -> tuple[dict[str, object], dict[str, str]]:
    """Each audio file's row in the folder's CSV manifests, and each malformed manifest's reason."""
    rows: dict[str, object] = {}
    broken: dict[str, str] = {}
    for entry in entries:
        if PurePosixPath(entry.name).suffix.lower() != ".csv":
            continue
        try:
            reader = csv.DictReader(io.StringIO(store.read_text(entry.name), newline=""))
            header = reader.fieldnames or []
            if "file" not in header:
                raise ValueError(f"it has no 'file' column (its columns: {', '.join(header) or 'none'})")
            if unknown := sorted(set(header) - CSV_FIELDS):
                raise ValueError(f"unknown column(s) {', '.join(unknown)}; the columns are: file, {', '.join(sorted(FIELDS))}")
            listed: dict[str, object] = {}  # taken only if the whole manifest reads
            for number, row in enumerate(reader, start=2):
                if None in row:
                    raise ValueError(f"line {number} has more values than columns")
                if not row["file"]:
                    raise ValueError(f"line {number} names no file")
                if row["file"] in listed:
                    raise ValueError(f"{row['file']} is listed twice")
                listed[row["file"]] = row
            rows.update({name: row for name, row in listed.items() if name not in rows})
        except (ValueError, UnicodeDecodeError, csv.Error) as error:
            broken[entry.name] = f"The manifest {entry.name} is malformed: {error}."
    return rows, broken


def folder_scan(*, folder: DropFolder) -> int:
    """Record every new audio file with its manifest entry as a job; move aside the files whose job has
    finished and the malformed CSV manifests. The number of new jobs."""
    if problems := folder_problems(folder):
        logger.warning("Drop folder %s is not scanned: %s", folder.slug, " ".join(problems.values()))
        return 0
    store = store_for(folder)
    try:
        return _scan(folder, store)
    finally:
        store.close()


def _scan(folder: DropFolder, store: Store) -> int:
    entries = store.list()
    names = {entry.name for entry in entries}
    rows, broken = _csv_manifests(store, entries)
    for manifest, reason in broken.items():
        _move_aside(store, manifest, FAILED, reason=reason)
    created = 0
    for entry in entries:
        if not _is_audio(entry.name):
            continue
        manifest, error, sidecar = None, "", _sidecar(entry.name) in names
        if sidecar:
            try:
                manifest = json.loads(store.read_text(_sidecar(entry.name)))
            except (ValueError, UnicodeDecodeError) as problem:
                error = f"The sidecar {_sidecar(entry.name)} is not JSON: {problem}."
        elif entry.name in rows:
            manifest = rows[entry.name]
        else:
            continue  # its manifest entry has not arrived yet: the file is not complete until it has
        checksum = store.checksum(entry)
        job = DroppedFile.objects.filter(folder=folder, name=entry.name, checksum=checksum).first()
        if job is None:
            try:
                with transaction.atomic():
                    job = DroppedFile.objects.create(
                        folder=folder, name=entry.name, checksum=checksum, size=entry.size, manifest=manifest,
                        manifest_error=error, sidecar=sidecar,
                    )
            except IntegrityError:
                continue  # a scan running beside this one recorded it
            transaction.on_commit(lambda pk=job.pk: job_publish("intake.dropped_file", pk))
            created += 1
        elif job.status in (DroppedFile.Status.SUCCEEDED, DroppedFile.Status.FAILED) and not job.moved:
            dropped_file_move(job=job, store=store)
        elif job.status in (DroppedFile.Status.SUCCEEDED, DroppedFile.Status.FAILED):
            # The same file dropped again after it was ingested (or refused): moved aside as it was.
            _move_aside(store, entry.name, DONE if job.status == DroppedFile.Status.SUCCEEDED else FAILED,
                        reason=job.error, sidecar=_sidecar(entry.name) in names)  # fmt: skip
    return created


def _move_aside(store: Store, name: str, to: str, *, reason: str = "", sidecar: bool = False) -> None:
    if to == FAILED:
        store.write_text(f"{FAILED}/{name}.reason.txt", reason.rstrip() + "\n")
    if sidecar:
        store.move(_sidecar(name), to)
    store.move(name, to)


def dropped_file_move(*, job: DroppedFile, store: Store | None = None) -> None:
    """Move a finished job's file (and its sidecar) into done/ or failed/ (with the reason), once."""
    own = store is None
    store = store or store_for(job.folder)
    succeeded = job.status == DroppedFile.Status.SUCCEEDED
    try:
        _move_aside(store, job.name, DONE if succeeded else FAILED, reason=job.error, sidecar=job.sidecar)
    finally:
        if own:
            store.close()
    DroppedFile.objects.filter(pk=job.pk).update(moved=True)


def dropped_file_execute(*, job_id: int) -> Result:
    """Ingest the file if its job can be claimed, then move it aside. Safe to call any number of times."""
    row = DroppedFile.objects.select_related("folder").filter(pk=job_id, status="pending").first()
    if row is None:
        return Result(Outcome.SKIPPED)
    job = Held(row)
    if not job_claim(KIND, job):
        return Result(Outcome.SKIPPED)
    store = store_for(row.folder)  # one for the read and the move: over SFTP, one login
    try:
        result = _execute(job, store)
        if result.outcome in (Outcome.SUCCEEDED, Outcome.FAILED):
            row.refresh_from_db()
            if row.moved:
                return result
            try:
                dropped_file_move(job=row, store=store)
            except Exception:  # the next scan moves it: the job's outcome is stored
                logger.warning("Could not move %s aside; the next scan will.", row.name, exc_info=True)
        return result
    finally:
        store.close()


def _execute(job: Held, store: Store) -> Result:
    row: DroppedFile = job.row
    folder = row.folder
    if interrupted := job_interrupted(KIND, job):
        return interrupted
    if problems := folder_problems(folder):
        return job_give_back(KIND, job, IntakeError(" ".join(problems.values()), transient=True))
    if row.manifest_error:
        return job_fail(KIND, job, row.manifest_error)
    if row.size > settings.QA_AUDIO_MAX_BYTES:  # refused before a byte of it is downloaded
        return job_fail(KIND, job, f"{row.name} is larger than QA_AUDIO_MAX_BYTES ({settings.QA_AUDIO_MAX_BYTES} bytes).")
    try:
        entry = manifest_entry_check(row.manifest, file=row.name)
        with lease_kept(KIND, job), tempfile.TemporaryFile() as audio:
            checksum = store.download(row.name, audio)
            if checksum != row.checksum:
                raise FileGone(f"{row.name} changed after it was seen; the changed file is a job of its own.")
            with transaction.atomic():
                recording = audio_call_ingest(
                    workspace_id=folder.workspace_id, rubric_slug=entry.get("rubric") or folder.rubric_slug,
                    source=folder.source, external_id=entry.get("external_id") or Path(row.name).stem,
                    file=File(audio, name=row.name), agent_channel=entry.get("agent_channel") or folder.agent_channel,
                    customer_channel=entry.get("customer_channel", ""), agent_id=entry.get("agent", ""),
                    agent_name=entry.get("agent_name", ""), team=entry.get("team", ""),
                    language=entry.get("language") or folder.language,
                    occurred_at=_when(entry["occurred_at"]) if entry.get("occurred_at") else None,
                )  # fmt: skip
                if not job_succeed(KIND, job, now=timezone.now(), recording=recording):
                    transaction.set_rollback(True)
                    return Result(Outcome.SKIPPED)
    except FileGone as error:
        # Nothing of what was seen is left to move aside: the file in its place (if any) is another job's.
        return job_fail(KIND, job, str(error), moved=True)
    except IntakeError as error:
        return job_give_back(KIND, job, error)
    except (InvalidInputError, ConflictError) as error:
        return job_fail(KIND, job, refusal_text(error))
    return Result(Outcome.SUCCEEDED)


def folders_scan() -> int:
    """Scan every active folder (Celery beat, every INTAKE_SCAN_INTERVAL); one folder's trouble is logged
    and does not stop the others."""
    created = 0
    for folder in DropFolder.objects.filter(active=True):
        try:
            created += folder_scan(folder=folder)
        except Exception:
            logger.exception("Drop folder %s could not be scanned.", folder.slug)
    return created


def dropped_files_sweep() -> int:
    """Publish again the jobs whose worker died (lease run out) and the pending ones that are due."""
    return sum(job_publish("intake.dropped_file", pk) for pk in jobs_due(kind=KIND).values_list("pk", flat=True))
