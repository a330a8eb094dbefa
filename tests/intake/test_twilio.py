"""Twilio's recording status callback, signed as Twilio signs it (HMAC-SHA1 of the URL and the sorted
form fields with the account's auth token: the `twilio` library's RequestValidator, the one Twilio's
own helpers use), and the job that fetches the two-channel recording from a local server playing
Twilio's part and ingests it as an audio call."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from twilio.request_validator import RequestValidator

from core.jobs import Outcome
from intake.models import TwilioAccount, TwilioRecording
from intake.twilio import twilio_recording_execute
from qa.models import Recording, Transcription
from tests.intake.conftest import ACCOUNT_SID, TOKEN, TOKEN_VARIABLE

pytestmark = pytest.mark.django_db

SID = "RE" + "a" * 32


@pytest.fixture
def account(acme, settings, monkeypatch, fake_twilio):
    settings.INTAKE_SECRET_VARIABLES = [TOKEN_VARIABLE]
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [fake_twilio.base_url.removeprefix("http://")]
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    workspace, _rubric = acme
    account = TwilioAccount(
        workspace=workspace, slug="acme-twilio", account_sid=ACCOUNT_SID, auth_token_variable=TOKEN_VARIABLE,
        rubric_slug="care", source="twilio", agent_channel="right", language="en",
    )  # fmt: skip
    account.full_clean()
    account.save()
    return account


def callback_params(fake_twilio, sid: str = SID, **overrides) -> dict[str, str]:
    """The fields Twilio posts when a dual-channel recording of a <Dial> is ready."""
    return {
        "AccountSid": ACCOUNT_SID,
        "CallSid": "CA" + "b" * 32,
        "RecordingSid": sid,
        "RecordingUrl": fake_twilio.recording_url(sid),
        "RecordingStatus": "completed",
        "RecordingDuration": "9",
        "RecordingChannels": "2",
        "RecordingSource": "DialVerb",
        "RecordingStartTime": "Tue, 01 Dec 2026 10:00:00 +0000",
        **overrides,
    }


def post_signed(params: dict[str, str], *, query: str = "agent=ag-101&team=north", token: str = TOKEN,
                account: str = "acme-twilio", sign: dict[str, str] | None = None, signature: str | None = None):  # fmt: skip
    path = f"/intake/twilio/{account}/recording/" + (f"?{query}" if query else "")
    url = f"http://testserver{path}"
    if signature is None:
        signature = RequestValidator(token).compute_signature(url, sign if sign is not None else params)
    headers = {"HTTP_X_TWILIO_SIGNATURE": signature} if signature else {}
    return Client().post(path, data=urlencode(params), content_type="application/x-www-form-urlencoded", **headers)


def test_a_signed_callback_fetches_both_channels_and_ingests_one_audio_call(account, fake_twilio, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    response = post_signed(callback_params(fake_twilio))
    assert response.status_code == 202, response.content
    job = TwilioRecording.objects.get()
    assert (job.status, job.agent_id, job.team) == ("pending", "ag-101", "north")

    assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.SUCCEEDED
    recording = Recording.objects.get()
    assert (recording.source, recording.external_id, recording.workspace_id) == ("twilio", SID, account.workspace_id)
    assert (recording.audio_channels, recording.agent_channel) == (2, "right")
    assert (recording.agent_id, recording.team, recording.status) == ("ag-101", "north", Recording.Status.TRANSCRIBING)
    assert recording.occurred_at.isoformat() == "2026-12-01T10:00:00+00:00"
    assert Transcription.objects.get(recording=recording).status == Transcription.Status.PENDING
    assert recording.audio.read() == fake_twilio.stereo.read_bytes()  # the two-channel file, not the mix
    [download] = fake_twilio.downloads()
    assert download["query"] == {"RequestedChannels": ["2"]} and download["path"].endswith(f"{SID}.wav")
    job.refresh_from_db()
    assert (job.status, job.recording_id, job.attempts) == ("succeeded", recording.pk, 1)


def test_twilio_calling_back_again_ingests_nothing_more(account, fake_twilio, settings, tmp_path):
    """Twilio retries a callback it did not see answered; the RecordingSid makes it the same job."""
    settings.MEDIA_ROOT = tmp_path / "media"
    assert post_signed(callback_params(fake_twilio)).status_code == 202
    job = TwilioRecording.objects.get()
    assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.SUCCEEDED
    again = post_signed(callback_params(fake_twilio))
    assert again.status_code == 202 and again.json() == {"job": job.pk, "status": "succeeded"}
    assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.SKIPPED
    assert (TwilioRecording.objects.count(), Recording.objects.count(), len(fake_twilio.downloads())) == (1, 1, 1)


@pytest.mark.parametrize(
    "how",
    ["no signature", "another token", "a changed field", "another query", "an unknown account", "another account sid",
     "an inactive account"],
)
def test_a_callback_without_the_accounts_signature_is_refused_403(account, fake_twilio, how):
    params = callback_params(fake_twilio)
    kwargs = {
        "no signature": {"signature": ""},
        "another token": {"token": "not-the-token"},
        "a changed field": {"sign": {**params, "RecordingSid": "RE" + "c" * 32}},
        "an unknown account": {"account": "other-account"},
    }.get(how, {})
    if how == "another query":  # signed for one agent, posted for another
        path_signed = "http://testserver/intake/twilio/acme-twilio/recording/?agent=ag-101&team=north"
        kwargs = {"signature": RequestValidator(TOKEN).compute_signature(path_signed, params), "query": "agent=ag-999"}
    if how == "an inactive account":
        TwilioAccount.objects.filter(pk=account.pk).update(active=False)
    if how == "another account sid":
        params = callback_params(fake_twilio, AccountSid="AC" + "9" * 32)
    response = post_signed(params, **kwargs)
    assert response.status_code == 403
    assert response.json() == {"detail": "Invalid or missing X-Twilio-Signature."}
    assert not TwilioRecording.objects.exists() and not fake_twilio.requests


def test_an_account_whose_token_variable_is_not_allowed_is_refused(account, fake_twilio, settings):
    settings.INTAKE_SECRET_VARIABLES = ["SOMETHING_ELSE"]
    account.auth_token_variable = "SECRET_KEY"
    with pytest.raises(ValidationError, match="SECRET_KEY is not a variable the operator allowed: add it to INTAKE_SECRET_VARIABLES"):
        account.full_clean()
    # A row stored before the list changed: its token is not read, so no signature can be valid.
    settings.INTAKE_SECRET_VARIABLES = []
    assert post_signed(callback_params(fake_twilio)).status_code == 403


def test_a_recording_url_on_a_host_not_allowed_is_refused_with_the_reason(account, fake_twilio):
    params = callback_params(fake_twilio, RecordingUrl=f"http://169.254.169.254/latest/meta-data/{SID}")
    response = post_signed(params)
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "RecordingUrl: The address 169.254.169.254 is not allowed by INTAKE_TWILIO_ALLOWED_HOSTS."
    )
    other_port = fake_twilio.recording_url(SID).replace(fake_twilio.base_url, "http://127.0.0.1:9")
    response = post_signed(callback_params(fake_twilio, RecordingUrl=other_port))
    assert response.status_code == 400 and "Port 9 of 127.0.0.1 is not allowed" in response.json()["detail"]
    assert not TwilioRecording.objects.exists() and not fake_twilio.requests


def test_a_redirect_to_a_host_not_allowed_is_not_followed(account, fake_twilio, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    fake_twilio.redirect_to = "http://localhost:1"
    assert post_signed(callback_params(fake_twilio)).status_code == 202
    job = TwilioRecording.objects.get()
    assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.FAILED
    job.refresh_from_db()
    assert job.error == "The host localhost is not allowed by INTAKE_TWILIO_ALLOWED_HOSTS."
    assert not Recording.objects.exists() and len(fake_twilio.requests) == 1


def test_a_redirect_to_an_allowed_host_is_followed_without_the_credentials(account, fake_twilio, settings, tmp_path):
    """Twilio answers a media URL with a redirect to its storage: followed when that host is allowed too,
    and the account's credentials go only to the RecordingUrl's own host."""
    settings.MEDIA_ROOT = tmp_path / "media"
    fake_twilio.redirect_to = fake_twilio.base_url.replace("127.0.0.1", "localhost")
    port = fake_twilio.base_url.rsplit(":", 1)[1]
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [fake_twilio.base_url.removeprefix("http://"), f"localhost:{port}"]
    assert post_signed(callback_params(fake_twilio)).status_code == 202
    job = TwilioRecording.objects.get()
    assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.SUCCEEDED, TwilioRecording.objects.get().error
    first, second = fake_twilio.requests
    assert first["auth"].startswith("Basic ") and second["auth"] == "" and second["path"].startswith("/media/")
    assert Recording.objects.get().audio_channels == 2


def test_a_recording_that_is_not_there_is_acknowledged_and_not_fetched(account, fake_twilio):
    response = post_signed(callback_params(fake_twilio, RecordingStatus="absent"))
    assert response.status_code == 200 and response.json() == {"job": None, "status": "ignored"}
    assert not TwilioRecording.objects.exists()


def test_a_rubric_the_workspace_has_not_published_fails_the_job_with_the_reason(account, fake_twilio, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    TwilioAccount.objects.filter(pk=account.pk).update(rubric_slug="missing")
    assert post_signed(callback_params(fake_twilio)).status_code == 202
    job = TwilioRecording.objects.get()
    assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.FAILED
    job.refresh_from_db()
    assert job.error == "rubric: No published rubric 'missing' in this workspace."


def test_the_callback_answers_only_post(account):
    assert Client().get("/intake/twilio/acme-twilio/recording/").status_code == 405


def test_a_listed_name_that_resolves_to_a_loopback_address_is_refused_unless_the_address_is_listed(
    account, fake_twilio, settings
):
    port = fake_twilio.base_url.rsplit(":", 1)[1]
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [f"localhost:{port}"]
    url = fake_twilio.recording_url(SID).replace("127.0.0.1", "localhost")
    response = post_signed(callback_params(fake_twilio, RecordingUrl=url))
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert detail.startswith("RecordingUrl: The host localhost resolves to ")  # 127.0.0.1 or ::1
    assert detail.endswith(", a loopback, private or other non-public address that INTAKE_TWILIO_ALLOWED_HOSTS does not list.")
    # The addresses listed without the port allow only 80 and 443: not every service on them.
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [f"localhost:{port}", "127.0.0.1", "::1"]
    assert "resolves to" in post_signed(callback_params(fake_twilio, RecordingUrl=url)).json()["detail"]
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"]
    assert post_signed(callback_params(fake_twilio, RecordingUrl=url)).status_code == 202


class InternalService:
    """A service inside the network that a fetch must never reach: an HTTP server on 127.0.0.2 that
    records every request and answers 200 with a body of its own."""

    def __init__(self, port: int) -> None:
        self.requests: list[str] = []
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "8")
                self.end_headers()
                self.wfile.write(b"INTERNAL")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.2", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_fetch_connects_to_the_address_it_checked(account, fake_twilio, settings, tmp_path, monkeypatch):
    """DNS rebinding: a listed name whose DNS answers an allowed address to the check and an internal one
    the next time (an attacker's zone answers what it likes) cannot lead the fetch inside: the fetch
    connects to the address it checked instead of resolving the name again."""
    settings.MEDIA_ROOT = tmp_path / "media"
    port = int(fake_twilio.base_url.rsplit(":", 1)[1])
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [f"media.twilio.test:{port}", f"127.0.0.1:{port}"]
    lookups = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host != "media.twilio.test":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        address = "127.0.0.1" if len(lookups) == 1 else "127.0.0.2"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    url = fake_twilio.recording_url(SID).replace("127.0.0.1", "media.twilio.test")
    assert post_signed(callback_params(fake_twilio, RecordingUrl=url)).status_code == 202
    job = TwilioRecording.objects.get()
    internal = InternalService(port)
    try:
        lookups.clear()  # the worker's fetch: its check gets 127.0.0.1, any later lookup 127.0.0.2
        assert twilio_recording_execute(job_id=job.pk).outcome is Outcome.SUCCEEDED, TwilioRecording.objects.get().error
    finally:
        internal.close()
    assert internal.requests == [] and lookups == ["media.twilio.test"]
    [download] = fake_twilio.downloads()
    assert download["auth"].startswith("Basic ")
    assert Recording.objects.get().audio.read() == fake_twilio.stereo.read_bytes()
