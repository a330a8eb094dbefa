"""The intakes through a real `celery worker` on Redis: Twilio's callback, signed, and a file dropped with
its manifest (in a local folder, an S3 bucket, on an SFTP server) each become a call that the worker fetches, transcribes
(the fake OpenAI-protocol server) and judges (scripted), its scores quoting the transcript verifiably; a
worker killed mid-file, mid-download for Twilio and mid-ingest for a folder, has the file taken back by
the sweep once its lease runs out, and the call is ingested exactly once."""

from __future__ import annotations

import json
import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import boto3
import psycopg
import pytest
from django.db import connection
from django.utils import timezone
from moto.server import ThreadedMotoServer

from intake.folders import dropped_files_sweep, folder_scan
from intake.models import DropFolder, DroppedFile, TwilioRecording
from intake.twilio import twilio_recordings_sweep
from qa.models import Recording, Score, Transcription
from tests.intake.conftest import TOKEN, TOKEN_VARIABLE
from tests.intake.test_twilio import SID, callback_params, post_signed
from tests.support.fake_openai import transcription
from tests.support.sftp_server import USER, SFTPServer
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


# A dropped call, through the worker and the judge, with the worker killed mid-file on the way.

CALLER = "Hi, I lost my card yesterday."
AGENT = "Good morning, this is Sam from North Bank."


class Drops:
    """A drop folder of one kind, and how the test drops files into it and sees what is left."""

    def __init__(self, folder: DropFolder, put, names, env: dict[str, str]) -> None:
        self.folder, self.put, self.names, self.env = folder, put, names, env


@pytest.fixture(scope="module")
def s3_endpoint():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def local_drops(acme, settings, tmp_path, request) -> Drops:
    root = tmp_path / "drops"
    inbox = root / "acme"
    inbox.mkdir(parents=True)
    settings.INTAKE_FOLDER_ROOTS = [str(root)]
    folder = DropFolder.objects.create(workspace=acme[0], slug="acme-local", kind="local", path=str(inbox), rubric_slug="care", source="dump")

    def names() -> list[str]:
        return sorted(str(path.relative_to(inbox)) for path in inbox.rglob("*") if path.is_file())

    return Drops(folder, lambda name, data: (inbox / name).write_bytes(data), names, {"INTAKE_FOLDER_ROOTS": str(root)})


def s3_drops(acme, settings, tmp_path, request) -> Drops:
    endpoint = request.getfixturevalue("s3_endpoint")
    settings.INTAKE_S3_ALLOWED_HOSTS = [endpoint.removeprefix("http://")]
    settings.INTAKE_SECRET_VARIABLES = ["S3_KEY_ID", "S3_SECRET"]
    keys = {"S3_KEY_ID": "testing", "S3_SECRET": "testing"}
    for name, value in keys.items():
        request.getfixturevalue("monkeypatch").setenv(name, value)
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    client.create_bucket(Bucket="drops")
    folder = DropFolder.objects.create(
        workspace=acme[0], slug="acme-s3", kind="s3", bucket="drops", endpoint_url=endpoint, rubric_slug="care",
        source="dump", access_key_variable="S3_KEY_ID", secret_key_variable="S3_SECRET",
    )  # fmt: skip

    def names() -> list[str]:
        return sorted(item["Key"] for item in client.list_objects_v2(Bucket="drops").get("Contents", []))

    return Drops(folder, lambda name, data: client.put_object(Bucket="drops", Key=name, Body=data), names, keys)


@pytest.fixture(scope="module")
def sftp_server(tmp_path_factory):
    with SFTPServer(root=tmp_path_factory.mktemp("sftp-root"), files=tmp_path_factory.mktemp("ssh")) as server:
        yield server


def sftp_drops(acme, settings, tmp_path, request) -> Drops:
    server = request.getfixturevalue("sftp_server")
    env = {"INTAKE_SFTP_ALLOWED_HOSTS": f"127.0.0.1:{server.port}", "INTAKE_SFTP_FILES": f"{server.key_file},{server.known_hosts_file}"}
    settings.INTAKE_SFTP_ALLOWED_HOSTS = [env["INTAKE_SFTP_ALLOWED_HOSTS"]]
    settings.INTAKE_SFTP_FILES = env["INTAKE_SFTP_FILES"].split(",")
    inbox = server.root / tmp_path.name
    inbox.mkdir()
    folder = DropFolder.objects.create(
        workspace=acme[0], slug="acme-sftp", kind="sftp", host="127.0.0.1", port=server.port, username=USER,
        key_file=str(server.key_file), known_hosts_file=str(server.known_hosts_file), path=f"/{tmp_path.name}",
        rubric_slug="care", source="dump",
    )  # fmt: skip

    def names() -> list[str]:
        return sorted(str(path.relative_to(inbox)) for path in inbox.rglob("*") if path.is_file())

    return Drops(folder, lambda name, data: (inbox / name).write_bytes(data), names, env)


@pytest.fixture(params=[local_drops, s3_drops, sftp_drops], ids=["local", "s3", "sftp"])
def drops(request, acme, settings, tmp_path) -> Drops:
    return request.param(acme, settings, tmp_path, request)


@contextmanager
def recordings_locked():
    """A transaction of another connection holding a lock that stops any insert into qa_recording (reads
    go on): a worker that reaches the ingest waits there, mid-file, with its transaction open."""
    db = connection.settings_dict
    locker = psycopg.connect(dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None,
                             host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432)  # fmt: skip
    try:
        locker.execute("LOCK TABLE qa_recording IN SHARE MODE")
        yield
    finally:
        locker.rollback()
        locker.close()


def waiting_on_recordings() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE relation = 'qa_recording'::regclass AND NOT granted")
        return cursor.fetchone()[0] > 0


def test_a_dropped_call_is_judged_with_verified_quotes_once_though_its_worker_is_killed_mid_file(
    drops, stereo_wav, fake_llm, media_root, settings
):
    fake_llm.script(
        transcription([{"start": 0.0, "end": 2.5, "text": CALLER}]),  # left: the caller
        transcription([{"start": 3.0, "end": 6.0, "text": AGENT}]),  # right: the agent
    )  # then the judge's default answer: every criterion, quoting the transcript's first line
    drops.put("call.wav", stereo_wav.read_bytes())
    drops.put("call.json", json.dumps({"external_id": "dump-1", "agent": "ag-4", "team": "north", "language": "en"}).encode())
    with worker(fake_llm, media_root, settings, "celery", "transcription", **drops.env) as process:
        with recordings_locked():
            assert folder_scan(folder=drops.folder) == 1  # published at once: no transaction around the test
            wait_for(waiting_on_recordings, "the worker in the ingest, mid-file", 60, [process])
            [pool] = pool_processes(process)
            os.kill(pool, signal.SIGKILL)
        claim = DroppedFile.objects.get(status="running")
        while not dropped_files_sweep():
            assert timezone.now() < claim.leased_until + timezone.timedelta(seconds=10), "never taken back"
            time.sleep(0.2)
        assert timezone.now() > claim.leased_until
        judged = Recording.objects.filter(status__in=[Recording.Status.JUDGED, Recording.Status.IN_REVIEW])
        wait_for(lambda: judged.exists() and DroppedFile.objects.filter(moved=True).exists(), "the judged call", 120, [process])
        assert folder_scan(folder=drops.folder) == 0
    recording = judged.get()
    assert (recording.external_id, recording.agent_id, recording.team, recording.audio_channels) == ("dump-1", "ag-4", "north", 2)
    assert recording.transcript == f"CUSTOMER: {CALLER}\nAGENT: {AGENT}\n"
    scores = Score.objects.filter(run=recording.current_run)
    assert scores.count() == recording.rubric.criteria.count() > 0
    assert {(score.evidence, score.evidence_verified) for score in scores} == {(f"CUSTOMER: {CALLER}", True)}
    job = DroppedFile.objects.get()
    assert (job.status, job.attempts, job.recording_id) == ("succeeded", 2, recording.pk)
    assert Recording.objects.count() == 1 and Transcription.objects.count() == 1
    assert len([request for request in fake_llm.requests if "messages" in request]) == 1  # judged once
    assert [Path(name).name for name in drops.names()] == ["call.json", "call.wav"]
    assert all(Path(name).parent.name == "done" for name in drops.names())
