"""What the intakes share: their job kind for core.jobs, the error they give back, and the ingest of
one file as an audio call."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.files import File
from kombu.exceptions import OperationalError

from access.scope import scope_for_workspace
from core.errors import InvalidInputError
from core.jobs import JobKind
from core.queue import task_publish
from qa.models import Recording
from qa.services import recording_ingest
from rubrics.selectors import rubric_latest_published


class IntakeError(Exception):
    """Why a file could not be fetched or read; `transient` ones are tried again (core.jobs' Failure)."""

    def __init__(self, message: str, *, transient: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after


class FileGone(IntakeError):
    """The file a job was made for is no longer there as it was: removed, or replaced by other content."""


@dataclass(frozen=True)
class Held:
    row: Any


class IntakeJobs(JobKind):
    """A file to fetch and ingest: its lease is renewed while it downloads."""

    renewed = True

    @property
    def max_attempts(self) -> int:
        return settings.INTAKE_MAX_ATTEMPTS

    @property
    def lease_seconds(self) -> float:
        return settings.INTAKE_LEASE_SECONDS

    @property
    def time_limit(self) -> float:
        return settings.INTAKE_TIME_LIMIT


def refusal_text(error: Exception) -> str:
    """An ingest's refusal as one line: each field and its message."""
    if isinstance(error, InvalidInputError):
        return "; ".join(f"{field}: {message}" for field, message in error.errors.items())
    return str(error)


def audio_call_ingest(
    *, workspace_id: int, rubric_slug: str, source: str, external_id: str, file: File, agent_channel: str,
    customer_channel: str = "", agent_id: str = "", agent_name: str = "", team: str = "", language: str = "",
    occurred_at: datetime | None = None,
) -> Recording:  # fmt: skip
    """One audio call into the workspace, judged by its rubric's latest published version once
    transcribed; the stored one if the same call (source, external_id, content) came before.
    InvalidInputError or ConflictError say why not."""
    rubric = rubric_latest_published(slug=rubric_slug, scope=scope_for_workspace(workspace_id))
    if rubric is None:
        raise InvalidInputError({"rubric": f"No published rubric '{rubric_slug}' in this workspace."})
    recording, _new = recording_ingest(
        external_id=external_id, source=source, rubric=rubric, audio=file, agent_channel=agent_channel,
        customer_channel=customer_channel, agent_id=agent_id, agent_name=agent_name, team=team, language=language,
        occurred_at=occurred_at,
    )  # fmt: skip
    return recording


def job_publish(task: str, job_id: int) -> bool:
    """Hand a job to a worker; False if the broker is down (the sweep publishes it later)."""
    try:
        task_publish(task, job_id)
    except OperationalError:
        return False
    return True


__all__ = ["FileGone", "IntakeError", "IntakeJobs", "Held", "audio_call_ingest", "job_publish", "refusal_text"]
