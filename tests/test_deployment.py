"""Production settings: refuse to run insecurely, pass Django's deploy checks,
and serve the app under gunicorn with WhiteNoise serving static files."""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE"}}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "veredicto.example.com,127.0.0.1",
}


def test_production_refuses_to_start_without_a_secret_key():
    result = manage("check", DJANGO_SETTINGS_MODULE="config.settings.production", ALLOWED_HOSTS="x")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def settings_value(name: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Import the settings in a fresh process and print one of them."""
    services = {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "TIME_ZONE"}
    environment = {k: v for k, v in os.environ.items() if k not in services | {"DJANGO_SETTINGS_MODULE"}}
    environment.update(env)
    code = f"from django.conf import settings; print(settings.{name})"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("services", "named"),
    [
        ({}, "DATABASE_URL and CELERY_BROKER_URL"),
        ({"DATABASE_URL": "postgres://db.internal/veredicto"}, "CELERY_BROKER_URL"),
        ({"CELERY_BROKER_URL": "redis://redis.internal:6379/0"}, "DATABASE_URL"),
    ],
)
def test_production_refuses_to_start_without_its_database_and_broker(services, named):
    result = settings_value("DATABASES", ROOT, **PRODUCTION, **services)
    assert result.returncode != 0
    assert f"Production needs {named} set" in result.stderr


def test_production_reads_no_env_file_and_development_does(tmp_path):
    shutil.copytree(ROOT / "config", tmp_path / "config", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / ".env").write_text("TIME_ZONE=Europe/Madrid\nCELERY_BROKER_URL=redis://from-dotenv:6379/0\n")
    services = {"DATABASE_URL": "postgres://db.internal/veredicto"}

    without_broker = settings_value("TIME_ZONE", tmp_path, **PRODUCTION, **services)
    assert "Production needs CELERY_BROKER_URL" in without_broker.stderr  # the .env's broker was not read
    production = settings_value("TIME_ZONE", tmp_path, **PRODUCTION, **services, CELERY_BROKER_URL="redis://r:6379/0")
    assert production.stdout.strip() == "UTC", production.stderr
    local = settings_value("TIME_ZONE", tmp_path, DJANGO_SETTINGS_MODULE="config.settings.local")
    assert local.stdout.strip() == "Europe/Madrid", local.stderr


def test_local_settings_refuse_the_default_key_once_debug_is_off():
    result = manage("check", DJANGO_SETTINGS_MODULE="config.settings.local", DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
    assert manage("check", DJANGO_SETTINGS_MODULE="config.settings.local").returncode == 0


def test_check_deploy_is_clean_in_production():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_gunicorn_serves_the_app_and_whitenoise_its_static_files(tmp_path):
    env = {**PRODUCTION, "STATIC_ROOT": str(tmp_path / "static"), "SECURE_SSL_REDIRECT": "false"}
    collected = manage("collectstatic", "--noinput", **env)
    assert collected.returncode == 0, collected.stderr

    port = free_port()
    environment = {**os.environ, **env}
    environment.pop("DEBUG", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        login = _get_when_up(f"http://127.0.0.1:{port}/accounts/login/", server)
        assert login.status == 200 and b"csrfmiddlewaretoken" in login.read()
        css = urllib.request.urlopen(f"http://127.0.0.1:{port}/static/veredicto.css", timeout=10)
        assert css.status == 200
        assert "max-age" in css.headers["Cache-Control"]  # WhiteNoise, not Django's debug static view
    finally:
        server.terminate()
        server.wait(timeout=10)


def _get_when_up(url: str, server: subprocess.Popen, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return urllib.request.urlopen(url, timeout=5)
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"gunicorn did not serve {url}: {server.stderr.read().decode() if server.poll() is not None else 'timeout'}")
            time.sleep(0.3)
