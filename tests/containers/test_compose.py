"""compose.yaml brings up the whole system from the project's image, for real, with podman.

Built as a user builds it (the Containerfile, only BASE changed; the two service images are Debian
stand-ins, stack.py says why), started with podman-compose from a copy of compose.yaml with the test's
own .env beside it, then used only from outside, through the published port, as a TLS proxy in front
would: the admin login, an API key made with manage.py in the web container, recordings posted and
judged by the worker containers against a scripted OpenAI-compatible server on this machine (bound to
the project network's gateway, which the containers reach as host.containers.internal), one worker
container restarted mid-batch with nothing lost, and everything torn down.

Run alone with `scripts/test -m containers` (needs root: it installs Debian's podman, podman-compose,
runc and debootstrap when missing). Measured on a shared two-core machine: 3 min 42 s with the images
cached (the builds are layer-cache hits, 6 s); from nothing, the builds add 6.5 to 11 minutes
(debootstrap 156 to 261 s, the app image 162 to 269 s, the two stand-ins 81 to 112 s).
"""

from __future__ import annotations

import http.client
import json
import re
import secrets
import shutil
import socket
import time
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.containers.stack import APP_IMAGE, POSTGRES_IMAGE, REDIS_IMAGE, ROOT, Project, build_images, podman_for_tests
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.containers

HOST = "localhost"  # the test's ALLOWED_HOSTS
CRITERIA = 6  # samples/rubrics/customer-care.yaml
BATCH = 12


@pytest.fixture(scope="module")
def podman():
    with podman_for_tests() as podman:
        yield podman


@pytest.fixture(scope="module")
def images(podman):
    seconds = build_images(podman)
    print("image builds (s): " + ", ".join(f"{name} {value:.0f}" for name, value in seconds.items()))
    return seconds


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Client:
    """HTTP to the published port as a TLS-terminating proxy forwards it: X-Forwarded-Proto https (the
    production settings redirect plain HTTP and mark their cookies Secure), the allowed host name, and
    the cookies kept by hand (a cookie jar would not send Secure cookies over plain HTTP)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, *, body: bytes | None = None, headers: dict[str, str] | None = None,
                proxied: bool = True) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": HOST, **(headers or {})}
        if proxied:
            sent["X-Forwarded-Proto"] = "https"
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            payload = response.read()
            for header in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            return response.status, dict(response.headers), payload
        finally:
            connection.close()

    def api(self, method: str, path: str, key: str, payload: dict | None = None) -> tuple[int, dict]:
        status, _, body = self.request(
            method, path, body=json.dumps(payload).encode() if payload is not None else None,
            headers={"Authorization": f"Api-Key {key}", "Content-Type": "application/json"},
        )
        return status, json.loads(body or b"{}")


def recording(number: int) -> dict:
    return {
        "external_id": f"container-call-{number}",
        "rubric": "customer-care",
        "agent": {"id": "ag-101", "name": "Elizabeth"},
        "team": "cards",
        "channel": "voice",
        "language": "en",
        "occurred_at": "2026-11-02T14:03:00Z",
        "transcript": f"AGENT: Hello, this is Harbor Bank, my name is Elizabeth, call {number}.\n"
        "CUSTOMER: I lost my debit card.",
    }


def judged(client: Client, key: str, pk: int) -> dict | None:
    status, body = client.api("GET", f"/api/recordings/{pk}/", key)
    assert status == 200, body
    run = body.get("latest_run") or {}
    assert run.get("status") != "failed", body
    return body if run.get("status") == "succeeded" else None


def wait_judged(client: Client, key: str, ids: list[int], timeout: float) -> dict[int, dict]:
    deadline = time.monotonic() + timeout
    done: dict[int, dict] = {}
    while len(done) < len(ids):
        for pk in ids:
            if pk not in done and (body := judged(client, key, pk)):
                done[pk] = body
        if len(done) < len(ids):
            assert time.monotonic() < deadline, f"judged {len(done)} of {len(ids)} within {timeout:.0f} s"
            time.sleep(1)
    return done


def test_the_image_refuses_to_start_without_its_secrets(podman, images, tmp_path):
    """The production settings, as the image runs them, name what is missing instead of starting."""
    bare = podman("run", "--rm", APP_IMAGE, "web", check=False, timeout=120)
    assert bare.returncode != 0
    assert "Production needs DATABASE_URL and CELERY_BROKER_URL set in the environment" in bare.stderr
    no_secret = podman(
        "run", "--rm", "-e", "DATABASE_URL=postgres://veredicto:x@db.invalid:5432/veredicto",
        "-e", "CELERY_BROKER_URL=redis://redis.invalid:6379/0", APP_IMAGE, "web", check=False, timeout=120,
    )
    assert no_secret.returncode != 0
    assert "ImproperlyConfigured: Set the SECRET_KEY environment variable" in no_secret.stderr
    no_hosts = podman(
        "run", "--rm", "-e", "DATABASE_URL=postgres://veredicto:x@db.invalid:5432/veredicto",
        "-e", "CELERY_BROKER_URL=redis://redis.invalid:6379/0", "-e", f"SECRET_KEY={secrets.token_urlsafe(50)}",
        APP_IMAGE, "web", check=False, timeout=120,
    )
    assert no_hosts.returncode != 0
    assert "ImproperlyConfigured: Set the ALLOWED_HOSTS environment variable" in no_hosts.stderr
    # .env.example copied as it is: compose refuses to start without the database's password, naming it.
    directory = tmp_path / "example"
    directory.mkdir()
    shutil.copy(ROOT / "compose.yaml", directory / "compose.yaml")
    shutil.copy(ROOT / ".env.example", directory / ".env")
    refused = Project(podman, "veredicto-test-refused", directory).compose("up", "-d", "--no-build", check=False)
    assert refused.returncode != 0
    assert "set POSTGRES_PASSWORD in .env" in refused.stdout + refused.stderr
    assert podman("ps", "-a", "--filter", "label=io.podman.compose.project=veredicto-test-refused", "-q").stdout == ""
    # Not root, and the code is not the user's to change.
    who = podman("run", "--rm", APP_IMAGE, "sh", "-c", "id -u; test -w /app && echo writable || echo read-only")
    assert who.stdout.split() == ["10001", "read-only"]


def test_compose_starts_the_system_and_a_worker_restart_loses_nothing(podman, images, tmp_path):
    started = time.monotonic()
    directory = tmp_path / "project"
    directory.mkdir()
    # The committed compose file as it is; the test's settings go where a user's go, in .env beside it.
    shutil.copy(ROOT / "compose.yaml", directory / "compose.yaml")
    web_port, llm_port = free_port(), free_port()
    settings = {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": HOST,
        "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
        "VEREDICTO_IMAGE": APP_IMAGE,
        "POSTGRES_IMAGE": POSTGRES_IMAGE,
        "REDIS_IMAGE": REDIS_IMAGE,
        "WEB_ADDRESS": "127.0.0.1",
        "WEB_PORT": str(web_port),
        "WEB_CONCURRENCY": "2",
        "WORKER_REPLICAS": "2",
        "WORKER_CONCURRENCY": "2",
        "OPENAI_BASE_URL": f"http://host.containers.internal:{llm_port}/v1",
        "OPENAI_API_KEY": "unused",
        "QA_JUDGE_MODEL": "fake-judge",
        # Short limits, so that a judgment cut off by the restart would be swept and judged again
        # within the test (run time limit + 30 s, swept every 10 s), not after the default 6 minutes.
        "QA_LLM_TIMEOUT": "15",
        "QA_JUDGE_SOFT_TIME_LIMIT": "20",
        "QA_JUDGE_TIME_LIMIT": "25",
        "QA_JUDGE_SWEEP_INTERVAL": "10",
    }
    (directory / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
    project = Project(podman, f"veredicto-test-{secrets.token_hex(3)}", directory)
    llm = FakeOpenAI(latency=3.0)
    timings = {}
    try:
        project.compose("up", "-d", "--no-build")
        workers = [project.container("worker", 1), project.container("worker", 2)]
        project.wait_healthy(
            [project.container("db"), project.container("redis"), project.container("web"), *workers,
             project.container("transcription-worker")],
            timeout=300,
        )
        timings["up and healthy"] = time.monotonic() - started
        migrate = podman("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", project.container("migrate"))
        assert migrate.stdout.split() == ["exited", "0"]
        # podman-compose 1.0.3 starts web while migrate is still running (it ignores depends_on
        # conditions): the entry point held gunicorn back until the last migration was applied.
        last_applied = project.exec(
            "web", "python", "manage.py", "shell", "-c",
            "from django.db import connection; from django.db.migrations.recorder import MigrationRecorder; "
            "print(MigrationRecorder(connection).migration_qs.latest('applied').applied.strftime('%Y-%m-%d %H:%M:%S'))",
        ).strip().splitlines()[-1]
        web_logs = podman("logs", project.container("web"))
        web_output = web_logs.stdout + web_logs.stderr
        booted = re.search(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \+0000\] \[\d+\] \[INFO\] Starting gunicorn",
                           web_output)
        assert booted and booted.group(1) >= last_applied, (last_applied, web_output[-2000:])
        llm.start(port=llm_port, host=project.gateway())
        client = Client(web_port)

        # Production settings are in force: plain HTTP is sent to HTTPS.
        status, headers, _ = client.request("GET", "/accounts/login/", proxied=False)
        assert (status, headers["Location"]) == (301, f"https://{HOST}/accounts/login/")

        # The admin: a superuser made inside the web container logs in through the published port.
        password = secrets.token_urlsafe(16)
        project.exec(
            "web", "python", "manage.py", "createsuperuser", "--noinput", "--username", "it-admin",
            "--email", "it@example.com", env={"DJANGO_SUPERUSER_PASSWORD": password},
        )
        status, _, page = client.request("GET", "/admin/login/?next=/admin/")
        assert status == 200
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        form = {"csrfmiddlewaretoken": token, "username": "it-admin", "next": "/admin/"}
        origin = {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"https://{HOST}"}
        status, _, _ = client.request("POST", "/admin/login/?next=/admin/", headers=origin,
                                      body=urlencode({**form, "password": "not-the-password"}).encode())
        assert status == 200 and "sessionid" not in client.cookies  # the form again, no session
        status, headers, _ = client.request("POST", "/admin/login/?next=/admin/", headers=origin,
                                            body=urlencode({**form, "password": password}).encode())
        assert (status, headers["Location"]) == (302, "/admin/")
        status, _, page = client.request("GET", "/admin/")
        assert status == 200 and b"Veredicto" in page and b"it-admin" in page

        # A rubric and an API key, made with manage.py in the web container.
        project.exec("web", "python", "manage.py", "import_rubric", "samples/rubrics/customer-care.yaml", "--publish")
        key = project.exec("web", "python", "manage.py", "create_api_key", "container-test").strip().splitlines()[-1]

        # One recording, judged by a worker against the scripted server.
        status, body = client.api("POST", "/api/recordings/", key, recording(0))
        assert status == 201 and body["status"] == "queued", body
        first = wait_judged(client, key, [body["id"]], timeout=120)[body["id"]]
        assert first["latest_run"]["backend"] == "openai-compatible"
        assert first["latest_run"]["model"] == "fake-judge"
        assert len(first["scores"]) == CRITERIA
        assert all(score["evidence_verified"] for score in first["scores"]), first["scores"]
        assert any("call 0." in json.dumps(request) for request in llm.requests)
        timings["first judged"] = time.monotonic() - started

        # A batch, and one worker container restarted while it is being judged.
        status, body = client.api("POST", "/api/recordings/batch/", key,
                                  {"recordings": [recording(n) for n in range(1, BATCH + 1)]})
        assert status == 200, body
        assert [result["status"] for result in body["results"]] == [201] * BATCH, body
        ids = [result["recording"]["id"] for result in body["results"]]
        deadline = time.monotonic() + 120
        while not (judged_now := [pk for pk in ids if judged(client, key, pk)]):
            assert time.monotonic() < deadline, "nothing of the batch judged within 120 s"
            time.sleep(0.5)
        assert len(judged_now) < BATCH, "the batch was judged before the restart: make the judge slower"
        before = podman("inspect", "--format", "{{.State.StartedAt}}", workers[0]).stdout
        podman("restart", workers[0], timeout=120)
        assert podman("inspect", "--format", "{{.State.StartedAt}}", workers[0]).stdout != before
        # Its processes got the signal (the entry point execs them): a warm shutdown, not a kill.
        restarted_logs = podman("logs", workers[0])
        assert "Warm shutdown" in restarted_logs.stdout + restarted_logs.stderr

        wait_judged(client, key, ids, timeout=240)
        timings["batch judged"] = time.monotonic() - started
        # Nothing lost, nothing judged twice: one succeeded run per recording, each with its scores.
        counts = project.exec(
            "web", "python", "manage.py", "shell", "-c",
            "import json; from django.db.models import Count, Q; from qa.models import Recording; "
            "print(json.dumps(list(Recording.objects.filter(source='container-test').annotate("
            "ok=Count('runs', filter=Q(runs__status='succeeded'), distinct=True), "
            "failed=Count('runs', filter=Q(runs__status='failed'), distinct=True), "
            "scores=Count('runs__scores', filter=Q(runs__status='succeeded')))"
            ".values_list('ok', 'failed', 'scores'))))",
        )
        assert json.loads(counts.strip().splitlines()[-1]) == [[1, 0, CRITERIA]] * (BATCH + 1)

        # The restarted worker is healthy again, and beat has been sending the sweep to the workers.
        project.wait_healthy([workers[0]], timeout=120)
        worker_logs = "".join(logs.stdout + logs.stderr for logs in map(lambda w: podman("logs", w), workers))
        assert re.search(r"Task qa\.judge_sweep\[[^\]]+\] succeeded", worker_logs)

        # `down` without -v keeps the volumes: started again (as an upgrade does), migrate runs and
        # exits again, and the database still holds the judged calls and the key.
        project.compose("down")
        volumes = sorted(f"{project.name}_{volume}" for volume in ("media", "pgdata", "redisdata"))
        assert sorted(project.labelled("volume")) == volumes
        project.compose("up", "-d", "--no-build")
        project.wait_healthy([project.container("web")], timeout=300)
        assert judged(client, key, ids[-1]) is not None
        timings["down, up and still there"] = time.monotonic() - started
    finally:
        llm.stop()
        down_started = time.monotonic()
        left_by_down = project.down()
        timings["down"] = time.monotonic() - down_started
        print("container test (s): " + ", ".join(f"{name} {value:.0f}" for name, value in timings.items()))
    # `down -v` removed the containers and the volumes (the data) itself, and nothing is left.
    assert left_by_down == {"containers": [], "volumes": []}
    assert project.labelled("container") == []
    assert project.labelled("volume") == []
    assert podman("network", "exists", project.network, check=False).returncode != 0
