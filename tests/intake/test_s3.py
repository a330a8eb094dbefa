"""The S3 drop folder against moto's standalone server: S3's HTTP API on loopback, reached by the real
boto3 client over HTTP with signed requests; nothing is mocked in the client. What it leaves untested is
in docs/operations/intake-folder.md (moto is not AWS: IAM policies, real eventual consistency, multipart
ETags of large uploads, TLS)."""

from __future__ import annotations

import json

import boto3
import pytest
from django.core.exceptions import ValidationError
from moto.server import ThreadedMotoServer

from core.jobs import Outcome
from intake.folders import dropped_file_execute, folder_scan
from intake.models import DropFolder, DroppedFile
from qa.models import Recording

pytestmark = pytest.mark.django_db

KEY_ID, SECRET = "ACME_S3_KEY_ID", "ACME_S3_SECRET"


@pytest.fixture(scope="module")
def s3_server():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def bucket(s3_server, acme, settings, monkeypatch, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INTAKE_SECRET_VARIABLES = [KEY_ID, SECRET]
    settings.INTAKE_S3_ALLOWED_HOSTS = [s3_server.removeprefix("http://")]
    monkeypatch.setenv(KEY_ID, "testing-key")
    monkeypatch.setenv(SECRET, "testing-secret")
    client = boto3.client(
        "s3", endpoint_url=s3_server, region_name="us-east-1", aws_access_key_id="testing-key", aws_secret_access_key="testing-secret"
    )
    name = f"drops-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    client.create_bucket(Bucket=name)
    folder = DropFolder(
        workspace=acme[0], slug="acme-s3", kind="s3", bucket=name, prefix="incoming", endpoint_url=s3_server,
        access_key_variable=KEY_ID, secret_key_variable=SECRET, rubric_slug="care", source="s3-dump",
    )  # fmt: skip
    folder.full_clean()
    folder.save()
    return client, name, folder


def keys(client, bucket: str) -> list[str]:
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket).get("Contents", []))


def run_jobs() -> list[Outcome]:
    return [dropped_file_execute(job_id=pk).outcome for pk in DroppedFile.objects.filter(status="pending").values_list("pk", flat=True)]


def test_a_recording_dropped_in_the_bucket_is_ingested_once_and_moved_to_done(bucket, stereo_wav):
    client, name, folder = bucket
    client.put_object(Bucket=name, Key="incoming/call-1.wav", Body=stereo_wav.read_bytes())
    client.put_object(Bucket=name, Key="incoming/call-1.json", Body=json.dumps({"external_id": "ext-1", "agent": "ag-3", "team": "north"}))
    client.put_object(Bucket=name, Key="incoming/done/old.wav", Body=b"not looked at: below the prefix's top level")
    assert folder_scan(folder=folder) == 1
    assert folder_scan(folder=folder) == 0
    assert run_jobs() == [Outcome.SUCCEEDED]
    recording = Recording.objects.get()
    assert (recording.external_id, recording.source, recording.agent_id, recording.audio_channels) == ("ext-1", "s3-dump", "ag-3", 2)
    assert recording.audio.read() == stereo_wav.read_bytes()
    assert keys(client, name) == ["incoming/done/call-1.json", "incoming/done/call-1.wav", "incoming/done/old.wav"]
    assert DroppedFile.objects.get().checksum.startswith("etag:")


def test_a_malformed_manifest_in_the_bucket_is_moved_aside_with_its_reason(bucket, stereo_wav):
    client, name, folder = bucket
    client.put_object(Bucket=name, Key="incoming/bad.wav", Body=stereo_wav.read_bytes())
    client.put_object(Bucket=name, Key="incoming/bad.json", Body=json.dumps({"agent": "ag-1", "shift": "night"}))
    client.put_object(Bucket=name, Key="incoming/list.csv", Body=b"name,agent\nx.wav,ag-1\n")
    assert folder_scan(folder=folder) == 1
    assert run_jobs() == [Outcome.FAILED]
    assert keys(client, name) == [
        "incoming/failed/bad.json", "incoming/failed/bad.wav", "incoming/failed/bad.wav.reason.txt",
        "incoming/failed/list.csv", "incoming/failed/list.csv.reason.txt",
    ]  # fmt: skip
    reason = client.get_object(Bucket=name, Key="incoming/failed/bad.wav.reason.txt")["Body"].read().decode()
    assert reason.startswith("manifest: Unknown field(s) shift in the manifest entry of bad.wav")
    assert not Recording.objects.exists()


def test_a_bucket_that_cannot_be_read_gives_the_job_back_to_try_again(bucket, stereo_wav, monkeypatch):
    client, name, folder = bucket
    client.put_object(Bucket=name, Key="incoming/call.wav", Body=stereo_wav.read_bytes())
    client.put_object(Bucket=name, Key="incoming/call.json", Body=b"{}")
    assert folder_scan(folder=folder) == 1
    DropFolder.objects.filter(pk=folder.pk).update(bucket="no-such-bucket")
    assert run_jobs() == [Outcome.RETRY]  # given back to try again: nothing lost, nothing moved
    assert "NoSuchBucket" in DroppedFile.objects.get().error
    DropFolder.objects.filter(pk=folder.pk).update(bucket=name)
    assert keys(client, name) == ["incoming/call.json", "incoming/call.wav"]


def test_an_endpoint_or_key_variable_the_operator_did_not_allow_is_refused(bucket):
    _client, _name, folder = bucket
    folder.endpoint_url = "http://169.254.169.254/"
    folder.secret_key_variable = "SECRET_KEY"
    with pytest.raises(ValidationError) as refused:
        folder.full_clean()
    assert refused.value.message_dict == {
        "endpoint_url": ["The address 169.254.169.254 is not allowed by INTAKE_S3_ALLOWED_HOSTS."],
        "secret_key_variable": [f"SECRET_KEY is not a variable the operator allowed: add it to INTAKE_SECRET_VARIABLES or pick one of: {KEY_ID}, {SECRET}."],
    }
    # A row changed outside the admin is not scanned either.
    folder.save()
    assert folder_scan(folder=folder) == 0
