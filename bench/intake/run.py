"""Throughput of each intake at N calls: Twilio's callback and fetch, a local drop folder, an S3 drop
folder (moto's server on loopback), an SFTP drop folder (asyncssh's server on loopback). See README.md
beside this file.

.venv/bin/python bench/intake/run.py --calls 1000

What is measured is the ingest, in one process, one call after another: for Twilio, the signed callbacks
(signature check, job row) and then the jobs (claim, download over HTTP from a local server playing
Twilio, the audio checks, the file stored, the recording and its transcription written); for a folder,
the scan (listing, checksums, manifests, job rows) and then the jobs (claim, read or download, the same
ingest, the move into done/; over SFTP the scan logs in once, and each job once).
Transcription and judging are not: their messages are published to a broker no worker reads, and purged
at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import struct
import sys
import tempfile
import threading
import time
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_intake_bench")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/13")  # no worker listens; purged at the end
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("LOG_LEVEL", "WARNING")
WORK = Path(tempfile.mkdtemp(prefix="veredicto-bench-intake-"))
os.environ["MEDIA_ROOT"] = str(WORK / "media")
os.environ["INTAKE_FOLDER_ROOTS"] = str(WORK)
os.environ["INTAKE_SECRET_VARIABLES"] = "BENCH_TWILIO_TOKEN,BENCH_S3_KEY,BENCH_S3_SECRET"
os.environ.update(BENCH_TWILIO_TOKEN="bench-token", BENCH_S3_KEY="bench", BENCH_S3_SECRET="bench")

ACCOUNT_SID = "AC" + "0" * 32


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per intake")
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each call's two-channel audio")
    parser.add_argument("--intakes", default="twilio,local,s3,sftp")
    return parser.parse_args()


def stereo_wav(path: Path, seconds: float) -> bytes:
    """A two-channel 16 kHz WAV, a tone on each side (not silence, which the ingest refuses)."""
    rate = 16000
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        frames = bytearray()
        for i in range(int(rate * seconds)):
            frames += struct.pack("<hh", int(8000 * math.sin(2 * math.pi * 440 * i / rate)), int(8000 * math.sin(2 * math.pi * 660 * i / rate)))
        out.writeframes(bytes(frames))
    return path.read_bytes()


def rate(label: str, count: int, seconds: float) -> None:
    print(f"  {label:<34} {count:>6} in {seconds:7.2f} s   {count / seconds:8.1f}/s   {1000 * seconds / count:7.2f} ms each")


def setup_workspace():
    from django.core.management import call_command

    from access.models import Workspace
    from access.services import workspace_create

    call_command("migrate", verbosity=0)
    workspace = Workspace.objects.filter(slug="bench-intake").first() or workspace_create(slug="bench-intake")
    call_command("import_rubric", str(ROOT / "samples/rubrics/customer-care.yaml"), workspace="bench-intake", publish=True, stdout=open(os.devnull, "w"))
    return workspace


def run_jobs(execute, ids: list[int]) -> dict[str, int]:
    outcomes: dict[str, int] = {}
    for pk in ids:
        outcome = execute(job_id=pk).outcome.value
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def bench_twilio(workspace, audio: bytes, calls: int) -> None:
    from django.conf import settings
    from django.test import Client
    from twilio.request_validator import RequestValidator

    from intake.models import TwilioAccount, TwilioRecording
    from intake.twilio import twilio_recording_execute

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "audio/x-wav")
            self.send_header("Content-Length", str(len(audio)))
            self.end_headers()
            self.wfile.write(audio)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"127.0.0.1:{server.server_address[1]}"
    settings.INTAKE_TWILIO_ALLOWED_HOSTS = [base]
    account = TwilioAccount.objects.create(
        workspace=workspace, slug="bench-twilio", account_sid=ACCOUNT_SID, auth_token_variable="BENCH_TWILIO_TOKEN",
        rubric_slug="customer-care", source="bench-twilio",
    )  # fmt: skip
    validator, client = RequestValidator("bench-token"), Client()
    path = f"/intake/twilio/{account.slug}/recording/"
    started = time.perf_counter()
    statuses: dict[int, int] = {}
    for n in range(calls):
        sid = f"RE{n:032x}"
        params = {
            "AccountSid": ACCOUNT_SID, "CallSid": f"CA{n:032x}", "RecordingSid": sid, "RecordingStatus": "completed",
            "RecordingUrl": f"http://{base}/2010-04-01/Accounts/{ACCOUNT_SID}/Recordings/{sid}", "RecordingChannels": "2",
        }  # fmt: skip
        signature = validator.compute_signature(f"http://testserver{path}", params)
        response = client.post(path, data=urlencode(params), content_type="application/x-www-form-urlencoded", HTTP_X_TWILIO_SIGNATURE=signature)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
    callbacks = time.perf_counter() - started
    ids = list(TwilioRecording.objects.filter(account=account, status="pending").values_list("pk", flat=True))
    started = time.perf_counter()
    outcomes = run_jobs(twilio_recording_execute, ids)
    jobs = time.perf_counter() - started
    server.shutdown()
    print(f"twilio: callbacks {statuses}, jobs {outcomes}")
    rate("signed callbacks (job rows)", calls, callbacks)
    rate("fetch + ingest", calls, jobs)
    rate("end to end", calls, callbacks + jobs)


def bench_folder(workspace, audio: bytes, calls: int, *, kind: str) -> None:
    from django.conf import settings

    from intake.folders import dropped_file_execute, folder_scan
    from intake.models import DropFolder, DroppedFile

    fields = {"kind": kind, "rubric_slug": "customer-care", "source": f"bench-{kind}"}
    server = None
    if kind == "local":
        inbox = WORK / "drop"
        inbox.mkdir()
        for n in range(calls):
            (inbox / f"call-{n:05d}.wav").write_bytes(audio)
            (inbox / f"call-{n:05d}.json").write_text(json.dumps({"agent": f"ag-{n % 40}", "team": f"team-{n % 4}"}))
        fields["path"] = str(inbox)
    elif kind == "sftp":
        from tests.support.sftp_server import USER, SFTPServer

        server = SFTPServer(root=WORK / "sftp", files=WORK / "ssh").start()
        inbox = server.root / "in"
        inbox.mkdir()
        for n in range(calls):
            (inbox / f"call-{n:05d}.wav").write_bytes(audio)
            (inbox / f"call-{n:05d}.json").write_text(json.dumps({"agent": f"ag-{n % 40}", "team": f"team-{n % 4}"}))
        settings.INTAKE_SFTP_ALLOWED_HOSTS = [f"127.0.0.1:{server.port}"]
        settings.INTAKE_SFTP_FILES = [str(server.key_file), str(server.known_hosts_file)]
        fields.update(host="127.0.0.1", port=server.port, username=USER, key_file=str(server.key_file),
                      known_hosts_file=str(server.known_hosts_file), path="/in")  # fmt: skip
    else:
        import boto3
        from moto.server import ThreadedMotoServer

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        settings.INTAKE_S3_ALLOWED_HOSTS = [f"{host}:{port}"]
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bench", aws_secret_access_key="bench")
        s3.create_bucket(Bucket="drops")
        rows = ["file,agent,team"] + [f"call-{n:05d}.wav,ag-{n % 40},team-{n % 4}" for n in range(calls)]
        for n in range(calls):
            s3.put_object(Bucket="drops", Key=f"in/call-{n:05d}.wav", Body=audio)
        s3.put_object(Bucket="drops", Key="in/manifest.csv", Body="\n".join(rows).encode())
        fields.update(bucket="drops", prefix="in", endpoint_url=endpoint, access_key_variable="BENCH_S3_KEY", secret_key_variable="BENCH_S3_SECRET")
    folder = DropFolder.objects.create(workspace=workspace, slug=f"bench-{kind}", **fields)
    started = time.perf_counter()
    created = folder_scan(folder=folder)
    scan = time.perf_counter() - started
    ids = list(DroppedFile.objects.filter(folder=folder, status="pending").values_list("pk", flat=True))
    started = time.perf_counter()
    outcomes = run_jobs(dropped_file_execute, ids)
    jobs = time.perf_counter() - started
    started = time.perf_counter()
    rescan = folder_scan(folder=folder)
    empty = time.perf_counter() - started
    print(f"{kind} folder: {created} jobs from the scan, jobs {outcomes}, a second scan found {rescan}")
    rate("scan (job rows)", calls, scan)
    rate("read + ingest + move to done/", calls, jobs)
    rate("end to end", calls, scan + jobs)
    print(f"  {'scan of the emptied folder':<34} {1000 * empty:.1f} ms")
    if server is not None:
        server.stop()


def main() -> None:
    args = parse_args()
    import django

    django.setup()
    import logging

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's server logs every request
    from config.celery import app as celery_app
    from intake.models import DropFolder, TwilioAccount
    from qa.models import Recording

    workspace = setup_workspace()
    TwilioAccount.objects.filter(workspace=workspace).delete()
    DropFolder.objects.filter(workspace=workspace).delete()
    Recording.objects.filter(workspace=workspace).delete()
    audio = stereo_wav(WORK / "call.wav", args.seconds)
    print(f"{args.calls} calls per intake, each {args.seconds:g} s of two-channel 16 kHz WAV ({len(audio):,} bytes); one process, one call at a time")
    try:
        for intake in args.intakes.split(","):
            if intake == "twilio":
                bench_twilio(workspace, audio, args.calls)
            else:
                bench_folder(workspace, audio, args.calls, kind=intake)
        print(f"recordings stored: {Recording.objects.filter(workspace=workspace).count()}")
    finally:
        with celery_app.connection_for_write() as connection:
            for queue in ("celery", "transcription"):
                try:
                    connection.default_channel.queue_purge(queue)
                except Exception:
                    pass
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
