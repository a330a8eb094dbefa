"""The intakes through a real `celery worker` on Redis: Twilio's callback, signed, becomes a call that
the worker fetches, transcribes (the fake OpenAI-protocol server) and judges (scripted); a worker killed
mid-file, from Twilio or from an S3 bucket, has the file taken back by the sweep once its lease runs out,
and the call is ingested exactly once."""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from django.utils import timezone
from moto.server import ThreadedMotoServer

from intake.folders import dropped_files_sweep, folder_scan
from intake.models import DropFolder, DroppedFile, TwilioRecording
from intake.twilio import twilio_recordings_sweep
from qa.models import Recording, Transcription
from tests.intake.conftest import TOKEN, TOKEN_VARIABLE
from tests.intake.test_twilio import SID, callback_params, post_signed
from tests.support.fake_openai import transcription
from tests.support.workers import celery_worker, pool_processes

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

LEASE = 3  # seconds: INTAKE_LEASE_SECONDS of these workers (the default is minutes)


@contextmanager
def worker(fake_llm, media_root, settings, *queues: str, **env: str):
    environment = {
        "OPENAI_BASE_URL": fake_llm.base_url, "OPENAI_API_KEY": "test-key", "QA_TRANSCRIBE_MODEL": "fake-whisper", "QA_JUDGE_MODEL": "fake-judge",
        "MEDIA_ROOT": str(media_root), "INTAKE_LEASE_SECONDS": str(LEASE), TOKEN_VARIABLE: TOKEN,
        "INTAKE_SECRET_VARIABLES": ",".join(settings.INTAKE_SECRET_VARIABLES),
        "INTAKE_TWILIO_ALLOWED_HOSTS": ",".join(settings.INTAKE_TWILIO_ALLOWED_HOSTS),
        "INTAKE_S3_ALLOWED_HOSTS": ",".join(settings.INTAKE_S3_ALLOWED_HOSTS), **env,
    }  # fmt: skip
    with celery_worker("-Q", ",".join(queues or ("celery",)), "--concurrency=1", env=environment) as process:
        yield process


def state() -> str:
    """Where the intakes' jobs and their calls stand, for a failure's message."""
    return "; ".join(
        [f"twilio {job.status} {job.attempts} {job.error}" for job in TwilioRecording.objects.all()]
        + [f"file {job.status} {job.attempts} {job.error}" for job in DroppedFile.objects.all()]
        + [f"call {r.status} {r.failure_reason}" for r in Recording.objects.all()]
        + [f"transcription {t.status} {t.error}" for t in Transcription.objects.all()]
    )


def wait_for(condition, what: str, timeout: float, workers=()) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert all(process.poll() is None for process in workers), "the worker exited"
        assert time.monotonic() < deadline, f"{what} did not happen in time: {state()}"
        time.sleep(0.1)


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def twilio_account(acme, settings, monkeypatch, fake_twilio):
    from tests.intake.test_twilio import account

    return account.__wrapped__(acme, settings, monkeypatch, fake_twilio)


def test_a_signed_callback_ends_as_a_judged_call_with_agent_and_customer_turns(
    twilio_account, fake_twilio, fake_llm, media_root, settings
):
    fake_llm.script(
        transcription([{"start": 0.0, "end": 2.5, "text": "Hi, I lost my card yesterday."}]),  # left: the caller
        transcription([{"start": 3.0, "end": 6.0, "text": "Good morning, this is Sam from North Bank."}]),  # right: the agent
    )
    with worker(fake_llm, media_root, settings, "celery", "transcription") as process:
        assert post_signed(callback_params(fake_twilio)).status_code == 202
        judged = Recording.objects.filter(status__in=[Recording.Status.JUDGED, Recording.Status.IN_REVIEW])
        wait_for(judged.exists, "the judged call", 120, [process])
    recording = judged.get()
    assert recording.transcript == "CUSTOMER: Hi, I lost my card yesterday.\nAGENT: Good morning, this is Sam from North Bank.\n"
    assert (recording.external_id, recording.agent_id, recording.audio_channels) == (SID, "ag-101", 2)
    assert recording.current_run.scores.exists()
    job = TwilioRecording.objects.get()
    assert (job.status, job.attempts, job.recording_id) == ("succeeded", 1, recording.pk)


def test_a_worker_killed_mid_download_loses_nothing_and_doubles_nothing(
    twilio_account, fake_twilio, fake_llm, media_root, settings
):
    fake_twilio.hold_first = 30  # the first download is still in flight when its worker dies
    with worker(fake_llm, media_root, settings) as process:
        assert post_signed(callback_params(fake_twilio)).status_code == 202
        running = TwilioRecording.objects.filter(status="running")
        wait_for(lambda: running.exists() and fake_twilio.requests, "the claim and the download", 60, [process])
        [pool] = pool_processes(process)
        os.kill(pool, signal.SIGKILL)
        claim = running.get()
        # Beat's sweep leaves the job while its lease holds, then takes it back and publishes it again.
        while not twilio_recordings_sweep():
            assert timezone.now() < claim.leased_until + timezone.timedelta(seconds=10), "never taken back"
            time.sleep(0.2)
        assert timezone.now() > claim.leased_until
        done = TwilioRecording.objects.filter(status="succeeded")
        wait_for(done.exists, "the recording taken back", 60, [process])
        assert post_signed(callback_params(fake_twilio)).status_code == 202  # Twilio's retry, late
        time.sleep(1)
    assert done.get().attempts == 2
    assert Recording.objects.count() == 1 and Transcription.objects.count() == 1
    assert len(fake_twilio.requests) == 2


@pytest.fixture
def slow_s3(settings):
    """moto's S3 server behind a proxy that holds the first download of a .wav for 30 s."""
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    held = []

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _forward(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.command == "GET" and self.path.split("?")[0].endswith(".wav") and not held:
                held.append(self.path)
                time.sleep(30)
            connection = http.client.HTTPConnection(host, port, timeout=60)
            connection.request(self.command, self.path, body=body, headers=dict(self.headers))
            answer = connection.getresponse()
            payload = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _forward

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{proxy.server_address[1]}"
    settings.INTAKE_S3_ALLOWED_HOSTS = [url.removeprefix("http://")]
    yield url, held
    proxy.shutdown()
    moto.stop()


def test_a_worker_killed_mid_file_from_the_bucket_loses_nothing_and_doubles_nothing(
    slow_s3, acme, stereo_wav, fake_llm, media_root, settings, monkeypatch
):
    endpoint, held = slow_s3
    settings.INTAKE_SECRET_VARIABLES = ["S3_KEY_ID", "S3_SECRET"]
    monkeypatch.setenv("S3_KEY_ID", "testing")
    monkeypatch.setenv("S3_SECRET", "testing")
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    client.create_bucket(Bucket="drops")
    client.put_object(Bucket="drops", Key="call.wav", Body=stereo_wav.read_bytes())
    client.put_object(Bucket="drops", Key="call.json", Body=json.dumps({"external_id": "dump-1", "agent": "ag-4"}).encode())
    folder = DropFolder.objects.create(
        workspace=acme[0], slug="acme-s3", kind="s3", bucket="drops", endpoint_url=endpoint, rubric_slug="care",
        source="dump", access_key_variable="S3_KEY_ID", secret_key_variable="S3_SECRET",
    )  # fmt: skip
    with worker(fake_llm, media_root, settings, S3_KEY_ID="testing", S3_SECRET="testing") as process:
        assert folder_scan(folder=folder) == 1  # published at once: no transaction around the test
        running = DroppedFile.objects.filter(status="running")
        wait_for(lambda: running.exists() and held, "the claim and the download", 60, [process])
        [pool] = pool_processes(process)
        os.kill(pool, signal.SIGKILL)
        claim = running.get()
        while not dropped_files_sweep():
            assert timezone.now() < claim.leased_until + timezone.timedelta(seconds=10), "never taken back"
            time.sleep(0.2)
        done = DroppedFile.objects.filter(status="succeeded", moved=True)
        wait_for(done.exists, "the file taken back", 60, [process])
        assert folder_scan(folder=folder) == 0
    assert done.get().attempts == 2
    assert Recording.objects.get().external_id == "dump-1"
    assert sorted(item["Key"] for item in client.list_objects_v2(Bucket="drops")["Contents"]) == ["done/call.json", "done/call.wav"]
