"""bench/scale's compose stack: the pure parts (the .env and the override it writes, reading a process's
container, its pid in the container and a cgroup's CPU), on text as this machine's podman 4.3 with runc
and cgroupfs writes it. Bringing up the whole stack is tests/containers' and the bench's own runs'."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench.scale.compose import (
    cgroup_cpu_seconds, cgroup_path, container_in, env_file, namespace_pid, override_yaml, role_of, stack_env,
    version_in,
)  # fmt: skip
from bench.scale.run import BACKENDS, CONMON, SHAPE_ENV, Cpu, judge_command, parse_args

DB = "ff3ad1e20627ff8698fa5b436f054a5aeff450df7f68f70c2352db0665e709cd"
WEB = "0123456789abcdef" * 4

# /proc/PID/cgroup of a process in a container, cgroup v1 beside the unified hierarchy (this machine's).
HYBRID = "\n".join(
    f"{number}:{controllers}:/libpod_parent/libpod-{DB}"
    for number, controllers in ((9, "name=systemd"), (8, "pids"), (4, "memory"), (2, "cpuacct"), (1, "cpu"), (0, ""))
)


def test_the_stacks_env_keeps_the_native_runs_limits_and_secret_and_sets_compose_yamls_own_variables():
    settings = stack_env(
        SHAPE_ENV, mode="sync", web_port=8295, web_concurrency=3, workers=2, worker_concurrency=10, password="pw",
        images={"app": "localhost/a:1", "postgres": "localhost/p:15", "redis": "localhost/r:7"},
        collect_interval=60, poll_interval=60,
    )  # fmt: skip
    assert settings["QA_API_THROTTLE_RATE"] == SHAPE_ENV["QA_API_THROTTLE_RATE"] == "100000/min"
    assert settings["QA_LLM_REQUESTS_PER_MINUTE"] == "100000"
    # The key the driver makes is checked by web: the same secret on both sides.
    assert settings["SECRET_KEY"] == SHAPE_ENV["SECRET_KEY"]
    assert settings["SECURE_SSL_REDIRECT"] == "0"
    assert settings["QA_JUDGE_ALLOWED_HOSTS"] == "host.containers.internal"  # where the workers reach the judge
    assert "DJANGO_SETTINGS_MODULE" not in settings  # the image's own
    assert (settings["WORKER_REPLICAS"], settings["WORKER_CONCURRENCY"], settings["WEB_CONCURRENCY"]) == ("2", "10", "3")
    assert (settings["WEB_ADDRESS"], settings["WEB_PORT"]) == ("127.0.0.1", "8295")
    assert (settings["VEREDICTO_IMAGE"], settings["POSTGRES_IMAGE"], settings["REDIS_IMAGE"]) == (
        "localhost/a:1", "localhost/p:15", "localhost/r:7")  # fmt: skip
    assert "QA_BATCH_COLLECT_INTERVAL" not in settings
    batch = stack_env(SHAPE_ENV, mode="batch", web_port=1, web_concurrency=1, workers=2, worker_concurrency=1,
                      password="pw", images={"app": "a", "postgres": "p", "redis": "r"}, collect_interval=7,
                      poll_interval=9)  # fmt: skip
    assert (batch["QA_BATCH_COLLECT_INTERVAL"], batch["QA_BATCH_POLL_INTERVAL"]) == ("7", "9")


def test_the_env_file_is_one_line_a_setting_and_refuses_what_would_break_it():
    assert env_file({"A": "1", "B_2": "x=y"}) == "A=1\nB_2=x=y\n"
    with pytest.raises(ValueError):
        env_file({"A": "two\nlines"})
    with pytest.raises(ValueError):
        env_file({"not a name": "1"})


def test_the_override_publishes_the_database_and_redis_on_loopback_only():
    override = yaml.safe_load(override_yaml(5433, 6380))
    assert override == {"services": {"db": {"ports": ["127.0.0.1:5433:5432"]},
                                     "redis": {"ports": ["127.0.0.1:6380:6379"]}}}  # fmt: skip


def test_a_process_is_put_in_its_containers_role_by_the_id_in_its_cgroup():
    roles = {DB: "db container", WEB: "web"}
    assert container_in(HYBRID, roles) == "db container"
    assert container_in(HYBRID.replace(DB, WEB), roles) == "web"
    assert container_in("0::/user.slice/session-1.scope\n1:cpu:/", roles) is None


def test_the_pid_inside_the_container_is_the_last_of_nspid():
    assert namespace_pid("Name:\tpostgres\nTgid:\t29286\nNSpid:\t29286\t57\nPPid:\t1\n") == 57
    assert namespace_pid("Name:\tbash\nNSpid:\t812\n") == 812  # not in a container: its own pid
    assert namespace_pid("Name:\told kernel\n") is None


def test_the_cgroup_path_is_the_controllers_own_hierarchys_or_else_the_unified_one():
    assert cgroup_path(HYBRID, "cpuacct") == f"/libpod_parent/libpod-{DB}"
    assert cgroup_path("4:cpu,cpuacct:/a\n0::/b", "cpuacct") == "/a"
    assert cgroup_path("0::/only/unified", "cpuacct") == "/only/unified"
    assert cgroup_path("4:memory:/a", "cpuacct") is None


def test_a_cgroups_cpu_is_read_from_cpuacct_usage_in_nanoseconds_or_cpu_stat_in_microseconds(tmp_path):
    v1 = tmp_path / "v1"
    (v1 / "cpuacct/libpod_parent" / f"libpod-{DB}").mkdir(parents=True)
    (v1 / "cpuacct/libpod_parent" / f"libpod-{DB}" / "cpuacct.usage").write_text("2500000000\n")
    assert cgroup_cpu_seconds(HYBRID, v1) == 2.5
    v2 = tmp_path / "v2"
    (v2 / "machine" / "x").mkdir(parents=True)
    (v2 / "machine/x/cpu.stat").write_text("usage_usec 1250000\nuser_usec 1000000\nsystem_usec 250000\n")
    assert cgroup_cpu_seconds("0::/machine/x\n", v2) == 1.25
    assert cgroup_cpu_seconds("0::/gone\n", v2) is None


def test_container_roles_name_the_replicas_as_the_native_run_names_its_workers():
    assert [role_of("worker", n) for n in (1, 2)] == ["judge worker 1", "judge worker 2"]
    assert role_of("web", 1) == "web" and role_of("beat", 1) == "beat"
    # The arithmetic sums roles by these prefixes; the db container's own role is split by Cpu instead.
    assert role_of("redis", 1).startswith("redis") and not role_of("db", 1).startswith("postgresql")


def test_the_scripted_judge_binds_where_the_containers_reach_it():
    args = argparse.Namespace(mode="sync", judge_port=8296, latency=2.0, jitter=0.5, polls_in_progress=1)
    command = judge_command(args, "10.89.0.1")
    assert command[command.index("--host") + 1] == "10.89.0.1" and "tests.support.fake_openai" in command
    args.mode = "batch"
    assert "tests.support.fake_batches" in judge_command(args, "10.89.0.1")
    assert parse_args(["--rate", "1", "--minutes", "1", "--mode", "sync"]).stack == "native"
    assert parse_args(["--rate", "1", "--minutes", "1", "--mode", "sync", "--stack", "compose"]).stack == "compose"


@pytest.mark.parametrize("server", ["fake_openai", "fake_batches"])
def test_the_scripted_servers_take_the_address_to_bind(server):
    done = subprocess.run([sys.executable, "-m", f"tests.support.{server}", "--help"], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[2], timeout=60)  # fmt: skip
    assert "--host" in done.stdout


def test_cpu_reads_a_containers_processes_by_their_cgroup_and_splits_the_databases_backends(tmp_path):
    """Cpu.container_role on a fake /proc entry: a backend of this database, another PostgreSQL process,
    a web process, conmon for one of the stack's containers and for another's."""
    cpu = Cpu({}, {DB: "db container", WEB: "web"})

    def proc(name: str, cgroup: str, nspid: str) -> Path:
        entry = tmp_path / name
        entry.mkdir()
        (entry / "cgroup").write_text(cgroup)
        (entry / "status").write_text(f"Name:\tx\nNSpid:\t{nspid}\n")
        return entry

    assert cpu.container_role(proc("1", HYBRID, "4001\t57"), b"postgres: veredicto\0", {57}) == BACKENDS
    assert cpu.container_role(proc("2", HYBRID, "4002\t12"), b"postgres: walwriter\0", {57}) == (
        "db container: PostgreSQL's other processes")  # fmt: skip
    assert cpu.container_role(proc("3", HYBRID.replace(DB, WEB), "4003\t9"), b"gunicorn\0", set()) == "web"
    assert cpu.container_role(proc("4", "0::/user.slice", "4004"), b"bash\0", set()) is None
    conmon = f"/usr/bin/conmon\0--api-version\0001\0-c\0{WEB}\0".encode()
    assert cpu.container_role(proc("5", "0::/libpod_parent/conmon", "4005"), conmon, set()) == CONMON
    other = f"/usr/bin/conmon\0-c\0{'f' * 64}\0".encode()
    assert cpu.container_role(proc("6", "0::/libpod_parent/conmon", "4006"), other, set()) is None


def test_a_backend_seen_once_stays_a_backend_when_the_last_sample_is_read_without_the_backends(tmp_path, monkeypatch):
    """The driver's last sample passes no backends (they are known by then): a backend's CPU until then
    is still the backends', not PostgreSQL's other processes'."""
    entry = tmp_path / "4001"
    entry.mkdir()
    (entry / "cgroup").write_text(HYBRID)
    (entry / "status").write_text("Name:\tpostgres\nNSpid:\t4001\t57\n")
    (entry / "cmdline").write_bytes(b"postgres: veredicto veredicto 10.89.0.1(1234) idle\0")
    used = iter([1.0, 3.0, 7.0])

    def stat(path):
        return f"4001 (postgres) S 1 4001 4001 0 -1 0 0 0 0 0 {int(next(used) * 100)} 0 0 0 20 0 1 0 1 1 1"

    real_path = Path
    cpu = Cpu({}, {DB: "db container"})
    cpu.ticks = 100
    monkeypatch.setattr(Path, "glob", lambda self, pattern: [entry] if str(self) == "/proc" else real_path.glob(self, pattern))
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: stat(self) if self.name == "stat" and self.parent == entry
                        else real_path.read_bytes(self).decode())  # fmt: skip
    cpu.sample({57})
    cpu.sample({57})
    cpu.sample(set())
    assert cpu.by_role() == {BACKENDS: 6.0}


def test_the_tools_versions_are_read_from_their_own_version_lines():
    compose = "['podman', '--version', '']\nusing podman version: 4.3.1\npodman-composer version  1.0.3\npodman --version \npodman version 4.3.1\nexit code: 0\n"
    assert version_in(compose, "podman-compose") == "1.0.3"
    assert version_in("runc version 1.1.5+ds1\ncommit: v1.1.5\nspec: 1.0.2-dev\n", "runc version") == "1.1.5+ds1"
    assert version_in("nothing here\n", "runc version") == ""
