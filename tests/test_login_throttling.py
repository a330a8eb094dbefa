"""Login throttling (django-axes), as docs/operations/security.md says: after QA_LOGIN_FAILURE_LIMIT wrong passwords
for one username from one address, that pair is locked out for QA_LOGIN_LOCKOUT_MINUTES, even with
the right password; another address or user is not."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "correct horse battery staple"
ROOT = Path(__file__).resolve().parent.parent


def log_in(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password}, HTTP_ACCEPT_LANGUAGE="en")


def test_five_wrong_passwords_lock_the_user_out_even_with_the_right_one(settings):
    UserFactory(username="sup", password=PASSWORD, groups=["Supervisors"])
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(attacker, "sup", "wrong").status_code == 200  # the form again, with its error
    locked = log_in(attacker, "sup", "wrong")
    assert locked.status_code == 429
    assert "locked for 15 minutes" in locked.content.decode()

    right = log_in(attacker, "sup", PASSWORD)
    assert right.status_code == 429
    assert "_auth_user_id" not in attacker.session
    # The same user from another address logs in.
    elsewhere = Client(REMOTE_ADDR="198.51.100.2")
    assert log_in(elsewhere, "sup", PASSWORD).status_code == 302
    assert settings.AXES_COOLOFF_TIME == timedelta(minutes=15)

    # An admin lifts the lock before its time.
    call_command("axes_reset_username", "sup", stdout=StringIO())
    assert log_in(attacker, "sup", PASSWORD).status_code == 302


def test_a_lockout_is_still_logged_as_a_warning(settings, caplog):
    """Not verbose (no start-up banner) keeps the lockout warning; axes masks the username and
    address in it (AXES_SENSITIVE_PARAMETERS), and keeps each attempt in the database."""
    UserFactory(username="sup", password=PASSWORD, groups=["Supervisors"])
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    with caplog.at_level(logging.WARNING, logger="axes"):
        for _ in range(settings.AXES_FAILURE_LIMIT):
            log_in(attacker, "sup", "wrong")
    lockouts = [record.getMessage() for record in caplog.records if "Locking out" in record.getMessage()]
    assert len(lockouts) == 1 and 'path_info: "/accounts/login/"' in lockouts[0]


def test_management_commands_do_not_print_the_axes_banner():
    """Not on every command (scripts/demo runs several): the lockouts above are what is worth logging."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout
    assert "AXES" not in done.stdout + done.stderr


def test_the_admin_login_is_throttled_too(settings):
    UserFactory(username="owner", password=PASSWORD, is_staff=True, groups=["Rubric owners"])
    client = Client(REMOTE_ADDR="203.0.113.8")
    url = reverse("admin:login")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, {"username": "owner", "password": "wrong"})
    assert client.post(url, {"username": "owner", "password": PASSWORD}).status_code == 429


def test_pages_carry_a_content_security_policy_and_the_templates_have_no_inline_script(client):
    response = client.get(reverse("login"))
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";") if part.strip())
    assert policy["default-src"] == "'self'" and policy["script-src"] == "'self'"
    for template in (ROOT / "templates").rglob("*.html"):
        html = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), template  # a script without src
        assert not re.search(r"<[^>]*\son[a-z]+\s*=", html), template  # an inline handler
        assert "javascript:" not in html, template


def test_the_api_docs_load_under_the_policy(client):
    page = client.get("/api/docs/")
    assert page.status_code == 200 and "script-src 'self'" in page["Content-Security-Policy"]
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page.content.decode())
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200 and "/api/schema/" in script.content.decode()
