"""Twilio's recording status callback: a signed POST saying a recording is ready, which becomes a job
that fetches the dual-channel file (only from INTAKE_TWILIO_ALLOWED_HOSTS) and ingests it as an audio
call, once per RecordingSid however often Twilio calls back.

The callback does no work of its own: it checks the signature, stores the job (a second callback for
the same RecordingSid finds it stored) and publishes it after commit. A worker claims the job with a
lease it renews while it downloads; one that dies mid-file loses nothing: the sweep takes the job back
once its lease runs out, and the ingest, idempotent on (source, RecordingSid), cannot store it twice.
"""

from __future__ import annotations

import base64
import http.client
import logging
import tempfile
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import IO
from urllib.parse import urljoin, urlsplit

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone
from twilio.request_validator import RequestValidator

from core.errors import ConflictError, InvalidInputError
from core.hosts import HostNotAllowed, Target, target_connection, url_target
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
from intake.jobs import Held, IntakeError, IntakeJobs, audio_call_ingest, job_publish, refusal_text
from intake.models import TwilioAccount, TwilioRecording

logger = logging.getLogger(__name__)

SETTING = "INTAKE_TWILIO_ALLOWED_HOSTS"
FETCH_TIMEOUT = 60.0  # seconds without a byte before a download is given back to try again
REDIRECTS = 3  # Twilio answers a media URL with a redirect to where the file is stored
REDIRECT_CODES = (301, 302, 303, 307, 308)
CHUNK = 1 << 16


class SignatureRefused(Exception):
    """Not a request from the account's Twilio: no valid X-Twilio-Signature (or no such account)."""


class TwilioFetches(IntakeJobs):
    model = TwilioRecording
    noun = "recording fetch"


KIND = TwilioFetches()


def twilio_callback_accept(
    *, slug: str, url: str, params: dict[str, str], query: dict[str, str], signature: str
) -> TwilioRecording | None:
    """The job for the recording a callback announces, created once per RecordingSid and published
    after commit; None for a callback about a recording that is not there (absent, failed).
    SignatureRefused unless the request is signed with the account's auth token (an unknown account, an
    inactive one or one whose token variable is unset are refused alike); InvalidInputError naming the
    field otherwise (a RecordingUrl whose host is not allowed among them)."""
    account = TwilioAccount.objects.filter(slug=slug, active=True).first()
    token = account.auth_token if account is not None else ""
    if not token or not signature or not RequestValidator(token).validate(url, params, signature):
        raise SignatureRefused
    if params.get("AccountSid") != account.account_sid:
        raise SignatureRefused  # signed by this token, but about another (sub)account
    if params.get("RecordingStatus", "completed") != "completed":
        return None
    recording_sid, recording_url = params.get("RecordingSid", ""), params.get("RecordingUrl", "")
    if not recording_sid.startswith("RE") or not recording_sid.isalnum():
        raise InvalidInputError({"RecordingSid": f"Not a recording SID: '{recording_sid}'."})
    try:
        recording_target(recording_url)
    except HostNotAllowed as error:
        raise InvalidInputError({"RecordingUrl": str(error)}) from None
    channels = params.get("RecordingChannels", "2")
    with transaction.atomic():
        job, created = TwilioRecording.objects.get_or_create(
            recording_sid=recording_sid,
            defaults={
                "account": account,
                "call_sid": params.get("CallSid", "")[:34],
                "recording_url": recording_url,
                "channels": int(channels) if channels.isdigit() and 0 < int(channels) < 9 else 2,
                "started": _started(params.get("RecordingStartTime", "")),
                # The callback URL's own query (signed with the rest): who and which team the call was.
                "agent_id": query.get("agent", "")[:200],
                "agent_name": query.get("agent_name", "")[:200],
                "team": query.get("team", "")[:100],
            },
        )
        if created:
            transaction.on_commit(lambda: job_publish("intake.twilio_recording", job.pk))
    return job


def _started(value: str) -> datetime | None:
    """RecordingStartTime, an RFC 2822 date (`Tue, 01 Dec 2026 10:00:00 +0000`); None if absent or unreadable."""
    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None


def recording_target(url: str) -> Target:
    """Where fetching `url` connects, if INTAKE_TWILIO_ALLOWED_HOSTS allows it (core.hosts); HostNotAllowed
    naming the problem otherwise."""
    return url_target(url, allowed=settings.INTAKE_TWILIO_ALLOWED_HOSTS, setting=SETTING)


def media_url(job: TwilioRecording) -> str:
    """The file to fetch: WAV, both channels (Twilio mixes a dual-channel recording to mono unless asked)."""
    url = job.recording_url
    if not url.rsplit("/", 1)[-1].count("."):
        url += ".wav"
    return url + ("?RequestedChannels=2" if job.channels == 2 else "")


def recording_download(job: TwilioRecording, out: IO[bytes]) -> None:
    """Fetch the recording into `out`, each hop's host checked and connected to at the address checked
    (a name that answers DNS otherwise the second time cannot lead the fetch elsewhere), the account's
    credentials sent only to the host of the RecordingUrl. IntakeError (transient for a network error,
    a 5xx or a 429)."""
    url, origin = media_url(job), urlsplit(job.recording_url).netloc
    credentials = base64.b64encode(f"{job.account.account_sid}:{job.account.auth_token}".encode()).decode()
    for _hop in range(REDIRECTS + 1):
        try:
            target = recording_target(url)
        except HostNotAllowed as error:
            raise IntakeError(str(error)) from None
        headers = {"User-Agent": "veredicto-intake"}
        if urlsplit(url).netloc == origin:
            headers["Authorization"] = f"Basic {credentials}"
        connection = target_connection(target, timeout=FETCH_TIMEOUT)
        try:
            connection.request("GET", target.path, headers=headers)
            response = connection.getresponse()
            location = response.getheader("Location")
            if response.status in REDIRECT_CODES and location:
                url = urljoin(url, location)  # checked at the top of the next hop, before any connection
                continue
            if not 200 <= response.status < 300:
                retry_after = response.getheader("Retry-After") or ""
                raise IntakeError(
                    f"Twilio answered {response.status} for {url}.",
                    transient=response.status >= 500 or response.status == 429,
                    retry_after=float(retry_after) if retry_after.isdigit() else None,
                )
            _copy(response, out)
            return
        except (OSError, http.client.HTTPException) as error:
            raise IntakeError(f"Could not fetch {url}: {error or type(error).__name__}.", transient=True) from None
        finally:
            connection.close()
    raise IntakeError(f"More than {REDIRECTS} redirects fetching {job.recording_url}.")


def _copy(response: IO[bytes], out: IO[bytes]) -> None:
    limit, size = settings.QA_AUDIO_MAX_BYTES, 0
    while chunk := response.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise IntakeError(f"The recording is larger than QA_AUDIO_MAX_BYTES ({limit} bytes).")
        out.write(chunk)
    out.flush()
    out.seek(0)


def twilio_recording_execute(*, job_id: int) -> Result:
    """Fetch and ingest the recording if its job can be claimed. Safe to call any number of times."""
    row = TwilioRecording.objects.select_related("account").filter(pk=job_id, status="pending").first()
    if row is None:
        return Result(Outcome.SKIPPED)
    job = Held(row)
    if not job_claim(KIND, job):
        return Result(Outcome.SKIPPED)
    if interrupted := job_interrupted(KIND, job):
        return interrupted
    account = row.account
    try:
        with lease_kept(KIND, job), tempfile.TemporaryFile() as audio:
            recording_download(row, audio)
            with transaction.atomic():
                recording = audio_call_ingest(
                    workspace_id=account.workspace_id, rubric_slug=account.rubric_slug, source=account.source,
                    external_id=row.recording_sid, file=File(audio, name=f"{row.recording_sid}.wav"),
                    agent_channel=account.agent_channel, agent_id=row.agent_id, agent_name=row.agent_name,
                    team=row.team, language=account.language, occurred_at=row.started,
                )  # fmt: skip
                if not job_succeed(KIND, job, now=timezone.now(), recording=recording):
                    transaction.set_rollback(True)  # swept meanwhile: the executor holding it now stores it
                    return Result(Outcome.SKIPPED)
    except IntakeError as error:
        return job_give_back(KIND, job, error)
    except (InvalidInputError, ConflictError) as error:
        return job_fail(KIND, job, refusal_text(error))
    return Result(Outcome.SUCCEEDED)


def twilio_recordings_sweep() -> int:
    """Publish again the jobs whose worker died (lease run out) and the pending ones that are due."""
    return sum(job_publish("intake.twilio_recording", pk) for pk in jobs_due(kind=KIND).values_list("pk", flat=True))
