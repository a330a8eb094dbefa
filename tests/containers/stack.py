"""Podman, the images and a compose project for the container test.

No image registry is reachable from CI, so the official images compose.yaml names are replaced by
images made here: a Debian bookworm base made with debootstrap (Python 3.11, the project's version),
PostgreSQL and Redis stand-ins built on it from Debian's packages, and the app image built from the
project's own Containerfile with only its BASE changed. Images stay in podman's storage between runs
(layer cache: a rerun rebuilds only what changed); containers, networks and volumes never outlive a test.

This machine's podman needs two adjustments, given in a containers.conf of the test's own (never the
system's): the runc runtime (crun refuses hybrid cgroups) and nofile/nproc limits of at most 1024
(higher defaults fail with "setrlimit ... Operation not permitted").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

BASE_IMAGE = "localhost/veredicto-test-base:bookworm"
POSTGRES_IMAGE = "localhost/veredicto-test-postgres:15"
REDIS_IMAGE = "localhost/veredicto-test-redis:7"
APP_IMAGE = "localhost/veredicto-test:latest"

# The executable each Debian package brings.
DEBIAN_PACKAGES = {"podman": "podman", "podman-compose": "podman-compose", "runc": "runc", "debootstrap": "debootstrap"}

CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"
"""


def unavailable(reason: str) -> None:
    """Skip on a developer machine that cannot run it; in CI it is a failure."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must be able to run the container test)")
    pytest.skip(reason)


def install_tools(unavailable=unavailable) -> None:
    """Debian's podman, podman-compose, runc and debootstrap, installed when missing and root. Outside the
    suite (bench/scale's compose stack) `unavailable` says why it cannot instead of skipping."""
    if os.geteuid() != 0:
        unavailable("The container test needs root (debootstrap and rootful podman)")
    missing = [package for package, command in DEBIAN_PACKAGES.items() if shutil.which(command) is None]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        unavailable(f"Missing {', '.join(missing)} and no apt-get to install them")
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *missing]):
        done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=900)
        if done.returncode:
            unavailable(f"Could not install {', '.join(missing)}: {done.stderr.strip()[-500:]}")


class CommandFailed(AssertionError):
    pass


@dataclass
class Podman:
    """podman and podman-compose with the test's containers.conf."""

    conf: Path

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "CONTAINERS_CONF": str(self.conf)}

    def run(self, *command: str, check: bool = True, timeout: float = 600, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            command, env={**self.env, **(env or {})}, cwd=cwd, capture_output=True, text=True, timeout=timeout
        )
        if check and done.returncode:
            raise CommandFailed(
                f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def __call__(self, *arguments: str, **options) -> subprocess.CompletedProcess[str]:
        return self.run("podman", *arguments, **options)

    def exists(self, image: str) -> bool:
        return self("image", "exists", image, check=False).returncode == 0

    def image_id(self, image: str) -> str:
        return self("image", "inspect", "--format", "{{.Id}}", image).stdout.strip() if self.exists(image) else ""


@contextmanager
def podman_for_tests(unavailable=unavailable) -> Iterator[Podman]:
    install_tools(unavailable)
    with tempfile.TemporaryDirectory(prefix="veredicto-containers-") as directory:
        conf = Path(directory) / "containers.conf"
        conf.write_text(CONTAINERS_CONF)
        yield Podman(conf)


def build_base(podman: Podman) -> None:
    """Debian bookworm from debootstrap, once: the stand-in for the official slim Python image.

    It carries this machine's own certificate authorities (those added under
    /usr/local/share/ca-certificates, e.g. a proxy's) and tells pip to trust the system's store, as a
    site's own base image would: the app image's build installs from PyPI through it.
    """
    if podman.exists(BASE_IMAGE):
        return
    mirror = os.environ.get("VEREDICTO_DEBIAN_MIRROR", "http://deb.debian.org/debian")
    with tempfile.TemporaryDirectory(prefix="veredicto-base-", dir="/var/tmp") as directory:
        rootfs = Path(directory) / "rootfs"
        podman.run(
            "debootstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates",
            "bookworm", str(rootfs), mirror, timeout=900,
        )
        local_authorities = Path("/usr/local/share/ca-certificates")
        for certificate in local_authorities.glob("*.crt") if local_authorities.is_dir() else ():
            shutil.copy(certificate, rootfs / "usr/local/share/ca-certificates" / certificate.name)
        podman.run("chroot", str(rootfs), "update-ca-certificates")
        (rootfs / "etc/pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / cache).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            ["podman", "import", "-", BASE_IMAGE], stdin=tar.stdout, env=podman.env, capture_output=True, text=True,
            timeout=600,
        )
        tar.stdout.close()
        if tar.wait() or imported.returncode:
            raise CommandFailed(f"Importing the base image failed: {imported.stderr[-2000:]}")


def build(podman: Podman, image: str, context: Path, containerfile: Path) -> None:
    """`podman build` with the local base; the image it replaces (untagged now) is removed, so reruns
    after a change do not pile up old images."""
    previous = podman.image_id(image)
    podman(
        "build", "--format", "docker", "--build-arg", f"BASE={BASE_IMAGE}", "-f", str(containerfile), "-t", image,
        str(context), timeout=1800,
    )
    current = podman.image_id(image)
    if previous and previous != current:
        podman("rmi", previous, check=False)


def build_images(podman: Podman, app_image: str = APP_IMAGE) -> dict[str, float]:
    """The base, the two service stand-ins and the app image (tagged `app_image`: bench/scale tags its
    own, so that the suite's container test, rebuilding APP_IMAGE from another checkout meanwhile,
    never swaps the code under a load test); seconds each took."""
    seconds = {}
    started = time.monotonic()
    build_base(podman)
    seconds["base"] = time.monotonic() - started
    for image, name in ((POSTGRES_IMAGE, "postgres"), (REDIS_IMAGE, "redis")):
        started = time.monotonic()
        build(podman, image, HERE, HERE / f"{name}.Containerfile")
        seconds[name] = time.monotonic() - started
    started = time.monotonic()
    # The project's Containerfile and the project as context, exactly as a user builds it; only BASE differs.
    build(podman, app_image, ROOT, ROOT / "Containerfile")
    seconds["app"] = time.monotonic() - started
    return seconds


@dataclass
class Project:
    """A compose project started from a copy of compose.yaml with the test's .env beside it (and any
    override files after it in `files`, e.g. bench/scale's ports for the database and Redis)."""

    podman: Podman
    name: str
    directory: Path
    files: tuple[str, ...] = ("compose.yaml",)

    def compose(self, *arguments: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
        files = [option for name in self.files for option in ("-f", str(self.directory / name))]
        return self.podman.run(
            "podman-compose", "-p", self.name, *files, *arguments, cwd=self.directory, timeout=timeout, check=check,
        )

    def container(self, service: str, number: int = 1) -> str:
        """podman-compose's name for a service's container."""
        return f"{self.name}_{service}_{number}"

    def exec(self, service: str, *command: str, env: dict[str, str] | None = None) -> str:
        options = [arg for name, value in (env or {}).items() for arg in ("-e", f"{name}={value}")]
        return self.podman("exec", *options, self.container(service), *command).stdout

    @property
    def network(self) -> str:
        return f"{self.name}_default"

    def gateway(self) -> str:
        """The project network's gateway: this machine as the containers reach it (host.containers.internal)."""
        gateway = self.podman("network", "inspect", self.network, "--format", "{{range .Subnets}}{{.Gateway}}{{end}}")
        return gateway.stdout.strip()

    def labelled(self, kind: str) -> list[str]:
        """The project's containers or volumes that still exist."""
        listed = self.podman(
            kind, "ls", *(["-a"] if kind == "container" else []),
            "--filter", f"label=io.podman.compose.project={self.name}",
            "--format", "{{.Names}}" if kind == "container" else "{{.Name}}",
        ).stdout
        return listed.split()

    def down(self) -> dict[str, list[str]]:
        """`podman-compose down -v`, then what it left is removed too: the network (Debian's
        podman-compose 1.0.3 never removes it) and anything else, e.g. after a failed start.
        Answers the containers and volumes that `down -v` itself left."""
        self.compose("down", "-v", check=False, timeout=600)
        left = {"containers": self.labelled("container"), "volumes": self.labelled("volume")}
        if left["containers"]:
            self.podman("rm", "-f", "-t", "0", *left["containers"], check=False)
        if left["volumes"]:
            self.podman("volume", "rm", "-f", *left["volumes"], check=False)
        if self.podman("network", "exists", self.network, check=False).returncode == 0:
            self.podman("network", "rm", "-f", self.network, check=False)
        return left

    def wait_healthy(self, containers: list[str], timeout: float) -> None:
        """Runs each container's own health check (podman runs them on a timer only under systemd,
        absent here), all at once, until each has passed."""
        deadline = time.monotonic() + timeout
        pending = list(containers)
        while pending:
            checks = {
                container: subprocess.Popen(
                    ["podman", "healthcheck", "run", container], env=self.podman.env,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
                for container in pending
            }
            pending = [container for container, check in checks.items() if check.wait(timeout=120)]
            if pending and time.monotonic() > deadline:
                logs = {name: self.podman("logs", "--tail", "30", name, check=False) for name in pending}
                details = "\n".join(f"--- {name}\n{done.stdout}{done.stderr}" for name, done in logs.items())
                raise AssertionError(f"Not healthy within {timeout:.0f} s: {', '.join(pending)}\n{details}")
            if pending:
                time.sleep(3)
