"""Throughput and latency of the REST API under gunicorn on PostgreSQL. See README.md beside this file.

.venv/bin/python bench/api/run.py --posts 2000 --clients 16 --gets 500
.venv/bin/python bench/api/run.py --posts 5000 --clients 2 --batch 500 --gets 0
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_api_bench")
# Judgments are only enqueued here (publishing is part of an ingest's cost); no
# worker listens on this Redis db, and the script empties it at the end.
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")  # plain HTTP on loopback
# The benchmark measures the app, not the per-key limit.
os.environ.setdefault("QA_API_THROTTLE_RATE", "100000000/min")

GUNICORN_LOG = Path(tempfile.gettempdir()) / "veredicto-bench-api-gunicorn.log"
RUBRIC = "bench-api"
SOURCE = "bench-api"
CRITERIA = 12

AGENT_LINES = [
    "Buenas tardes, le atiende {name} del servicio de atención al cliente. ¿En qué puedo ayudarle?",
    "Entiendo perfectamente. Para confirmar, ¿me indica el número de contrato que aparece en la factura?",
    "Gracias. Veo en el sistema un cargo duplicado del día {day} por un importe de {amount} euros.",
    "Le pido disculpas por las molestias. Voy a abrir una reclamación para que le devuelvan el importe.",
    "El número de reclamación es {ticket}; le llegará también por correo electrónico antes de las 18 horas.",
    "¿Hay algo más en lo que le pueda ayudar hoy? Le recuerdo que puede consultar el estado en la web.",
]
CUSTOMER_LINES = [
    "Hola, llamo porque este mes me han cobrado dos veces la factura y no entiendo por qué.",
    "Sí, claro, es el {ticket}. Ya llamé la semana pasada y me dijeron que lo mirarían, pero nada.",
    "Exacto, ese cargo. Y además me han puesto un recargo por devolución que tampoco es culpa mía.",
    "Vale, ¿y cuánto tardará la devolución? Porque necesito ese dinero para pagar otras cosas este mes.",
    "De acuerdo, apunto el número. Espero que esta vez sí se resuelva, porque es la tercera vez que llamo.",
    "No, nada más, muchas gracias por la ayuda. Que tenga buena tarde.",
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=2000, help="recordings posted, after 50 not counted")
    parser.add_argument("--clients", type=int, default=16, help="concurrent posting clients")
    parser.add_argument("--gets", type=int, default=500, help="sequential GETs of a judged recording")
    parser.add_argument("--workers", type=int, default=5, help="gunicorn sync workers")
    parser.add_argument("--port", type=int, default=8092)
    parser.add_argument("--bytes", type=int, default=6000, help="transcript size")
    parser.add_argument(
        "--batch", type=int, default=0, help="recordings per request to /api/recordings/batch/ (0: single posts)"
    )
    parser.add_argument("--cpu-posts", type=int, default=200, help="single posts timed in-process for their CPU")
    return parser.parse_args()


def transcript(index: int, size: int) -> str:
    """A verbatim call of about `size` characters, different for each index."""
    values = {
        "name": "Marta",
        "day": 1 + index % 28,
        "amount": f"{20 + index % 80},{index % 100:02d}",
        "ticket": f"RC-{index:07d}",
    }
    lines: list[str] = []
    turn = 0
    while sum(len(line) + 1 for line in lines) < size:
        pool, speaker = (AGENT_LINES, "AGENTE") if turn % 2 == 0 else (CUSTOMER_LINES, "CLIENTE")
        lines.append(f"{speaker}: {pool[(turn // 2) % len(pool)].format(**values)}")
        turn += 1
    return "\n".join(lines) + "\n"


def data_prepare(size: int) -> tuple[str, int]:
    """A published rubric of 12 criteria, a fresh key, and a judged recording with 12 scores."""
    from django.core.management import call_command
    from django.utils import timezone

    from qa.api.services import api_key_create
    from access.models import ApiKey
    from qa.models import JudgeRun, Recording, Score
    from rubrics.models import Criterion, Rubric
    from access.scope import EVERYTHING
    from rubrics.selectors import rubric_latest_published
    from rubrics.services import rubric_publish

    call_command("migrate", verbosity=0)
    Recording.objects.filter(source=SOURCE).delete()
    ApiKey.objects.filter(name=SOURCE).delete()
    rubric = rubric_latest_published(slug=RUBRIC, scope=EVERYTHING)
    if rubric is None:
        rubric = Rubric.objects.create(name="Bench", slug=RUBRIC, language="es")
        for order in range(1, CRITERIA + 1):
            Criterion.objects.create(
                rubric=rubric, key=f"c{order}", title=f"Criterion {order}", description="One behaviour.", order=order
            )
        rubric = rubric_publish(rubric=rubric)
    _api_key, key = api_key_create(name=SOURCE)

    text = transcript(0, size)
    judged = Recording.objects.create(
        source=SOURCE, external_id="judged", transcript=text, content_hash="0" * 64, rubric=rubric,
        status=Recording.Status.JUDGED, occurred_at=timezone.now(),
    )  # fmt: skip
    run = JudgeRun.objects.create(
        recording=judged, rubric=rubric, backend="openai", model="bench", prompt_version="bench",
        status=JudgeRun.Status.SUCCEEDED, raw_output="{}" * 2000,
    )  # fmt: skip
    quote = "Le pido disculpas por las molestias"
    start = text.index(quote)
    Score.objects.bulk_create(
        Score(
            run=run,
            run_created_at=run.created_at,
            criterion=criterion,
            value=4,
            confidence=0.9,
            model_confidence=0.9,
            evidence=quote,
            evidence_verified=True,
            verification_status="verified",
            verification_spans=[[start, start + len(quote)]],
            verifier_version="bench",
            rationale="The agent apologises and opens a claim with a number.",
        )  # fmt: skip
        for criterion in rubric.criteria.all()
    )
    judged.current_run = run
    judged.save(update_fields=["current_run"])
    return key, judged.pk


def recording_body(index: int, size: int) -> dict:
    return {
        "external_id": f"post-{index}",
        "rubric": RUBRIC,
        "agent": {"id": f"a-{index % 40}", "name": "Marta"},
        "team": "cobranzas",
        "occurred_at": "2026-11-01T10:00:00Z",
        "transcript": transcript(index, size),
    }


def single_post_cpu(key: str, size: int, count: int) -> float:
    """The Django process's own CPU per new single post, in ms (Django's test client, in this process:
    parsing, checks, hashing, the ORM and the driver's side of the statements, the publish to Redis)."""
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_HOST="127.0.0.1")
    bodies = [json.dumps(recording_body(20_000_000 + index, size)) for index in range(count + 10)]
    for body in bodies[:10]:  # warm-up: imports, the first connection
        assert client.post("/api/recordings/", body, content_type="application/json").status_code == 201
    started = time.process_time()
    for body in bodies[10:]:
        assert client.post("/api/recordings/", body, content_type="application/json").status_code == 201
    return (time.process_time() - started) / count * 1000


def query_counts(key: str, judged_id: int, size: int) -> dict[str, int]:
    """Queries per request, counted in-process with Django's test client."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_HOST="127.0.0.1")
    counts = {}
    body = json.dumps({"external_id": "count", "rubric": RUBRIC, "agent": "a-1", "transcript": transcript(1, size)})
    for label, call in [
        ("POST /api/recordings/ (new)", lambda: client.post("/api/recordings/", body, content_type="application/json")),
        (
            "POST /api/recordings/ (resend)",
            lambda: client.post("/api/recordings/", body, content_type="application/json"),
        ),
        ("GET /api/recordings/{id}/ (12 scores)", lambda: client.get(f"/api/recordings/{judged_id}/")),
        ("GET /api/recordings/ (page of 50)", lambda: client.get("/api/recordings/")),
        (
            "POST /api/recordings/batch/ (100 new)",
            lambda: client.post(
                "/api/recordings/batch/",
                json.dumps({"recordings": [recording_body(30_000_000 + index, size) for index in range(100)]}),
                content_type="application/json",
            ),
        ),
    ]:
        with CaptureQueriesContext(connection) as context:
            assert call().status_code in (200, 201)
        counts[label] = len(context)
    return counts


def server_start(args: argparse.Namespace) -> subprocess.Popen:
    log = open(GUNICORN_LOG, "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--workers", str(args.workers),
         "--bind", f"127.0.0.1:{args.port}", "--log-level", "warning"],
        cwd=ROOT, stdout=log, stderr=log,
    )  # fmt: skip
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{args.port}/api/schema/", timeout=5)
            return server
        except urllib.error.HTTPError:  # any answer means it is up (production keeps the schema behind a login)
            return server
        except OSError:  # refused, reset or timed out while gunicorn boots
            time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"gunicorn did not start; see {GUNICORN_LOG}")


def request(url: str, key: str, data: bytes | None = None) -> tuple[int, float, bytes]:
    headers = {"Authorization": f"Api-Key {key}", "Content-Type": "application/json"}
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=120) as response:
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        status, body = error.code, b""
    return status, time.perf_counter() - started, body


def percentiles(seconds: list[float]) -> str:
    ms = sorted(value * 1000 for value in seconds)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms"


def post_all(
    base: str, key: str, indexes: range, clients: int, size: int, batch: int
) -> tuple[list[int], list[float], float]:
    """Every recording posted, singly or `batch` per request; its status (a batch's per item), each request's latency."""
    if batch:
        url = f"{base}/api/recordings/batch/"
        groups = [indexes[start : start + batch] for start in range(0, len(indexes), batch)]
        bodies = [json.dumps({"recordings": [recording_body(i, size) for i in group]}).encode() for group in groups]
    else:
        url = f"{base}/api/recordings/"
        bodies = [json.dumps(recording_body(index, size)).encode() for index in indexes]
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda body: request(url, key, body), bodies))
    wall = time.perf_counter() - started
    statuses = []
    for status, _latency, body in results:
        statuses += [item["status"] for item in json.loads(body)["results"]] if batch and status == 200 else [status]
    return statuses, [latency for _, latency, _ in results], wall


def processes_cpu(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user + system) each process has used so far, from /proc; those gone are left out."""
    seconds = {}
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            seconds[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return seconds


def cpu_used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds used between the two readings by the processes alive at both."""
    return sum(after[pid] - before[pid] for pid in before.keys() & after.keys())


def workers_pids(server: subprocess.Popen) -> list[int]:
    return [int(pid) for pid in Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()]


def backends_pids() -> list[int]:
    """PostgreSQL's backends serving this database (the workers keep theirs: CONN_MAX_AGE), but this process's."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [pid for (pid,) in cursor.fetchall()]


def main() -> None:
    from bench.database import database_create

    args = parse_args()
    database_create()
    import django

    django.setup()
    key, judged_id = data_prepare(args.bytes)
    counts = query_counts(key, judged_id, args.bytes)
    base = f"http://127.0.0.1:{args.port}"
    print(f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.1f}")
    print(f"transcript size: {len(transcript(2, args.bytes).encode())} bytes")
    if args.cpu_posts:
        cpu = single_post_cpu(key, args.bytes, args.cpu_posts)
        print(f"single post's own CPU: {cpu:.1f} ms per new recording (in-process, {args.cpu_posts} posts)")
    server = server_start(args)
    try:
        # warm-up
        post_all(base, key, range(10_000_000, 10_000_050), args.clients, args.bytes, min(args.batch, 25))
        workers, backends = workers_pids(server), backends_pids()
        cpu_before = processes_cpu(workers), processes_cpu(backends)
        statuses, latencies, wall = post_all(base, key, range(args.posts), args.clients, args.bytes, args.batch)
        cpu = cpu_used(cpu_before[0], processes_cpu(workers))
        postgres_cpu = cpu_used(cpu_before[1], processes_cpu(backends))
        url = "/api/recordings/batch/" if args.batch else "/api/recordings/"
        per = f"{args.batch} per request, " if args.batch else ""
        print(
            f"POST {url}: {args.posts} in {wall:.1f} s = {args.posts / wall:.0f}/s "
            f"({per}{args.clients} clients, {args.workers} gunicorn workers); per request {percentiles(latencies)}; "
            f"statuses {dict(sorted((s, statuses.count(s)) for s in set(statuses)))}; "
            f"CPU per recording: gunicorn workers {cpu / args.posts * 1000:.2f} ms, "
            f"PostgreSQL backends {postgres_cpu / args.posts * 1000:.2f} ms ({len(backends)} backends)"
        )
        if args.gets:
            gets = [request(f"{base}/api/recordings/{judged_id}/", key) for _ in range(args.gets)]
            assert {status for status, _, _ in gets} == {200}
            print(f"GET /api/recordings/{{id}}/ (12 scores), one client: {percentiles([t for _, t, _ in gets])}")
    finally:
        server.terminate()
        server.wait()
        from redis import Redis

        Redis.from_url(os.environ["CELERY_BROKER_URL"]).flushdb()
    for label, count in counts.items():
        print(f"queries per {label}: {count}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
