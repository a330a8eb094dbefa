"""bench/scale's `--stack compose`: the project's own compose.yaml brought up with podman-compose, the way
tests/containers/test_compose.py brings it up (its images, containers.conf and project naming, from
tests/containers/stack.py), for the load test to post to and measure.

The services started are web, the judge worker (WORKER_REPLICAS=2), beat, and what they depend on (db,
redis, migrate); the transcription worker is left out (the calls come as text). An override file beside
the copy of compose.yaml publishes the database's and Redis's ports on 127.0.0.1 only, so the driver on
this machine reads the queue, the runs and the tables' sizes as it does natively (compose.yaml itself
publishes only web's). The scripted judge runs on this machine, bound to the project network's gateway,
which the containers reach as host.containers.internal.

CPU: rootful podman's processes are this machine's processes, so each is read from /proc/PID/stat as the
native run reads its own, and put in its container's role by its /proc/PID/cgroup (the container's id is
in its path); PostgreSQL's backends are told from its other processes by their pid inside the container
(NSpid in /proc/PID/status) against pg_stat_activity. Each container's whole cgroup (cpuacct.usage) is
read too, as a check that includes processes too short-lived for a sample.
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The services brought up: podman-compose adds what they depend on (db, redis, migrate).
SERVICES = ("web", "worker", "beat")
CGROUP_ROOT = Path("/sys/fs/cgroup")
# The app image from this checkout, under a tag of the bench's own: the suite's container test tags
# localhost/veredicto-test:latest from whatever checkout runs it, possibly while a load test runs.
APP_IMAGE = "localhost/veredicto-scale:latest"


def override_yaml(database_port: int, redis_port: int) -> str:
    """compose.yaml's db and redis with a port on this machine's loopback each, for the driver."""
    return (
        "# bench/scale: the driver on this machine reads the queue, the runs and the tables' sizes.\n"
        "services:\n"
        f"  db:\n    ports:\n      - \"127.0.0.1:{database_port}:5432\"\n"
        f"  redis:\n    ports:\n      - \"127.0.0.1:{redis_port}:6379\"\n"
    )


def stack_env(shape_env: dict[str, str], *, mode: str, web_port: int, web_concurrency: int, workers: int,
              worker_concurrency: int, password: str, images: dict[str, str],
              collect_interval: int, poll_interval: int) -> dict[str, str]:  # fmt: skip
    """The stack's .env: the native run's settings (the same secret, so that a key made by the driver is
    the one web checks, and the same raised throttle and judge quota) and compose.yaml's own variables."""
    settings = {name: value for name, value in shape_env.items() if name not in ("DJANGO_SETTINGS_MODULE",)}
    settings |= {
        "POSTGRES_PASSWORD": password,
        "VEREDICTO_IMAGE": images["app"],
        "POSTGRES_IMAGE": images["postgres"],
        "REDIS_IMAGE": images["redis"],
        "WEB_ADDRESS": "127.0.0.1",
        "WEB_PORT": str(web_port),
        "WEB_CONCURRENCY": str(web_concurrency),
        "WORKER_REPLICAS": str(workers),
        "WORKER_CONCURRENCY": str(worker_concurrency),
        # The scripted judge on this machine, as the containers name it: an operator allows a judge's host.
        "QA_JUDGE_ALLOWED_HOSTS": "host.containers.internal",
    }
    if mode == "batch":
        settings |= {"QA_BATCH_COLLECT_INTERVAL": str(collect_interval), "QA_BATCH_POLL_INTERVAL": str(poll_interval)}
    return settings


def env_file(settings: dict[str, str]) -> str:
    for name, value in settings.items():
        if "\n" in value or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            raise ValueError(f"not a .env line: {name}")
    return "".join(f"{name}={value}\n" for name, value in settings.items())


def container_in(cgroup: str, ids: dict[str, str]) -> str | None:
    """The role of the container whose full id is in a process's /proc/PID/cgroup, if any."""
    for container_id, role in ids.items():
        if container_id in cgroup:
            return role
    return None


def namespace_pid(status: str) -> int | None:
    """A process's pid in its innermost pid namespace (the last of /proc/PID/status's NSpid)."""
    for line in status.splitlines():
        if line.startswith("NSpid:"):
            return int(line.split()[-1])
    return None


def cgroup_path(cgroup: str, controller: str) -> str | None:
    """The path of a process's cgroup for one controller of cgroup v1 (`4:cpu,cpuacct:/x`), or of v2
    (`0::/x`) when the controller has no hierarchy of its own."""
    unified = None
    for line in cgroup.splitlines():
        number, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
        if number == "0" and controllers == "":
            unified = path
    return unified


def cgroup_cpu_seconds(cgroup: str, root: Path = CGROUP_ROOT) -> float | None:
    """A cgroup's CPU time in seconds: cpuacct.usage (v1, nanoseconds) or cpu.stat's usage_usec (v2)."""
    path = cgroup_path(cgroup, "cpuacct")
    if path is None:
        return None
    for mount in (root / "cpuacct", root / "cpu,cpuacct"):
        usage = mount / path.lstrip("/") / "cpuacct.usage"
        if usage.is_file():
            return int(usage.read_text()) / 1e9
    stat = root / path.lstrip("/") / "cpu.stat"
    if stat.is_file():
        for line in stat.read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
    return None


@dataclass
class Stack:
    """A compose project up for the bench: where the driver reaches it and what each container is."""

    project: object  # tests.containers.stack.Project
    database_url: str
    broker_url: str
    gateway: str
    roles: dict[str, str] = field(default_factory=dict)  # full container id: role
    pids: dict[str, int] = field(default_factory=dict)  # role: the container's first process, on this machine
    versions: dict[str, str] = field(default_factory=dict)

    def cgroup_seconds(self) -> dict[str, float]:
        """Each container's whole cgroup: CPU seconds since it started."""
        seconds = {}
        for role, pid in self.pids.items():
            try:
                used = cgroup_cpu_seconds(Path(f"/proc/{pid}/cgroup").read_text())
            except OSError:
                continue
            if used is not None:
                seconds[role] = used
        return seconds


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def role_of(service: str, number: int) -> str:
    return {"web": "web", "beat": "beat", "redis": "redis (the redis container)", "db": "db container"}.get(
        service, f"judge worker {number}"
    )


def unavailable(reason: str) -> None:
    raise SystemExit(f"--stack compose: {reason}")


@contextmanager
def compose_stack(args, shape_env: dict[str, str], logs: Path) -> Iterator[Stack]:
    """Images built (layer-cache hits after the first time), the project up and healthy, torn down after."""
    from tests.containers.stack import POSTGRES_IMAGE, REDIS_IMAGE, Project, build_images, podman_for_tests

    with podman_for_tests(unavailable) as podman:
        build_images(podman, APP_IMAGE)
        directory = Path(tempfile.mkdtemp(prefix="veredicto-scale-stack-", dir=logs))
        shutil.copy(ROOT / "compose.yaml", directory / "compose.yaml")
        database_port, redis_port = free_port(), free_port()
        (directory / "compose.bench.yaml").write_text(override_yaml(database_port, redis_port))
        password = secrets.token_urlsafe(24)
        images = {"app": APP_IMAGE, "postgres": POSTGRES_IMAGE, "redis": REDIS_IMAGE}
        settings = stack_env(
            shape_env, mode=args.mode, web_port=args.web_port, web_concurrency=args.web_concurrency,
            workers=args.workers, worker_concurrency=args.worker_concurrency, password=password, images=images,
            collect_interval=args.collect_interval, poll_interval=args.poll_interval,
        )  # fmt: skip
        (directory / ".env").write_text(env_file(settings))
        project = Project(podman, f"veredicto-scale-{secrets.token_hex(3)}", directory,
                          files=("compose.yaml", "compose.bench.yaml"))  # fmt: skip
        try:
            project.compose("up", "-d", "--no-build", *SERVICES)
            containers = {
                ("db", 1): project.container("db"), ("redis", 1): project.container("redis"),
                ("web", 1): project.container("web"), ("beat", 1): project.container("beat"),
                **{("worker", n): project.container("worker", n) for n in range(1, args.workers + 1)},
            }  # fmt: skip
            migrations_wait(project, logs)
            project.wait_healthy([name for (service, _), name in containers.items() if service != "beat"], timeout=300)
            stack = Stack(
                project,
                database_url=f"postgres://veredicto:{password}@127.0.0.1:{database_port}/veredicto",
                broker_url=f"redis://127.0.0.1:{redis_port}/0",
                gateway=project.gateway(),
            )
            for (service, number), name in containers.items():
                container_id, pid = podman("inspect", "--format", "{{.Id}} {{.State.Pid}}", name).stdout.split()
                stack.roles[container_id] = role_of(service, number)
                stack.pids[role_of(service, number)] = int(pid)
            stack.versions = versions(podman, images)
            yield stack
        finally:
            for name in project.labelled("container"):
                logged = podman("logs", name, check=False)
                (logs / f"{name}.log").write_text(logged.stdout + logged.stderr)
            project.down()


def migrations_wait(project, logs: Path, timeout: float = 600, tries: int = 3) -> None:
    """Until the migrate container has exited 0. It is started again when it failed: on this machine
    its first connection once failed to resolve `db` ("Temporary failure in name resolution") just after
    wait.py had reached it, while the other containers were joining the network, and compose.yaml's
    migrate is `restart: "no"`; the entry point then holds web and the workers back for good."""
    import time

    migrate = project.container("migrate")
    deadline = time.monotonic() + timeout
    failures = 0
    while time.monotonic() < deadline:
        state = project.podman("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", migrate).stdout.split()
        if state == ["exited", "0"]:
            return
        if state[0] == "exited":
            failures += 1
            logged = project.podman("logs", migrate, check=False)
            (logs / f"{migrate}-failed-{failures}.log").write_text(logged.stdout + logged.stderr)
            if failures >= tries:
                raise SystemExit(f"migrate failed {failures} times: see {logs}")
            print(f"migrate exited {state[1]}; started again ({logs / f'{migrate}-failed-{failures}.log'})",
                  file=sys.stderr, flush=True)  # fmt: skip
            project.podman("start", migrate)
        time.sleep(2)
    raise SystemExit(f"migrate did not finish within {timeout:.0f} s")


def versions(podman, images: dict[str, str]) -> dict[str, str]:
    found = {
        "podman": podman("version", "--format", "{{.Client.Version}}", check=False).stdout.strip(),
        # Debian's 1.0.3 says "podman-composer version  1.0.3".
        "podman-compose": _version(["podman-compose", "version"], podman.env, "podman-compose"),
        "runc": _version(["runc", "--version"], podman.env, "runc version"),
    }
    for role, image in images.items():
        found[f"image {role}"] = f"{image} {podman.image_id(image)[:12]}"
    return found


def _version(command: list[str], env: dict[str, str], prefix: str) -> str:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    return version_in(done.stdout + done.stderr, prefix)


def version_in(output: str, prefix: str) -> str:
    """The last word of the last line that starts with `prefix` (a tool's version line)."""
    lines = [line for line in output.splitlines() if line.startswith(prefix) and line.split()]
    return lines[-1].split()[-1] if lines else ""
