"""Password reset works where e-mail is configured and is not offered where it is not (issue 26: it
was offered with no e-mail configured; the log said the message failed and the user was told
nothing). The message goes through a real SMTP server on loopback (aiosmtpd)."""

from __future__ import annotations

import email
import os
import re
import runpy
import socket

import environ
import pytest
from aiosmtpd.controller import Controller
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.Message] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802  (aiosmtpd's hook name)
        message = email.message_from_bytes(envelope.content)
        message["X-Envelope-To"] = ",".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp():
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield inbox, f"smtp://127.0.0.1:{controller.port}"
    controller.stop()


@pytest.fixture
def no_email(settings):
    settings.QA_PASSWORD_RESET = False


def test_without_email_no_reset_is_offered_and_the_login_page_says_whom_to_ask(no_email):
    user = UserFactory(email="ana@example.com")
    client = Client(HTTP_ACCEPT_LANGUAGE="en")

    login = client.get("/accounts/login/").content.decode()
    assert "Ask an administrator to set a new one: this installation sends no e-mail." in login
    assert "/accounts/password_reset/" not in login
    assert client.get("/accounts/password_reset/").status_code == 404
    assert client.post("/accounts/password_reset/", {"email": user.email}).status_code == 404
    assert client.get("/accounts/password_reset/done/").status_code == 404
    assert client.get("/accounts/reset/done/").status_code == 404
    spanish = Client(HTTP_ACCEPT_LANGUAGE="es").get("/accounts/login/").content.decode()
    assert "Pida a un administrador" in spanish


def test_with_email_url_a_reset_reaches_the_user_and_sets_the_password(smtp, settings):
    inbox, url = smtp
    # What config/settings/base.py does with EMAIL_URL (the next test reads it from the environment).
    for name, value in environ.Env.email_url_config(url).items():
        setattr(settings, name, value)
    settings.QA_PASSWORD_RESET = True
    user = UserFactory(username="ana", email="ana@example.com")
    UserFactory(username="ben", email="ben@example.com")
    client = Client(HTTP_ACCEPT_LANGUAGE="en")

    assert 'href="/accounts/password_reset/"' in client.get("/accounts/login/").content.decode()
    sent = client.post("/accounts/password_reset/", {"email": "ana@example.com"}, follow=True)
    assert sent.redirect_chain == [("/accounts/password_reset/done/", 302)]
    assert "a message with a link to set a new password is on its way" in sent.content.decode()

    [message] = inbox.messages
    assert message["X-Envelope-To"] == "ana@example.com" and message["To"] == "ana@example.com"
    assert message["From"] == settings.DEFAULT_FROM_EMAIL
    body = message.get_payload(decode=True).decode()
    link = re.search(r"https?://[^/\s]+(/accounts/reset/[^/\s]+/[^/\s]+/)", body).group(1)
    form = client.get(link, follow=True)
    assert "Set a new password" in form.content.decode()
    done = client.post(form.redirect_chain[-1][0], {"new_password1": "a-New-pass-9431", "new_password2": "a-New-pass-9431"})
    assert done.status_code == 302 and done["Location"] == "/accounts/reset/done/"
    user.refresh_from_db()
    assert user.check_password("a-New-pass-9431")
    assert "has been used or has expired" in client.get(link, follow=True).content.decode()


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, (False, "", 25, False)),
        ({"EMAIL_URL": "smtp+tls://bot:secret@mail.example.com:587"}, (True, "mail.example.com", 587, True)),
        ({"EMAIL_HOST": "mail.internal", "EMAIL_PORT": "2525"}, (True, "mail.internal", 2525, False)),
    ],
)
def test_email_url_or_email_host_in_the_environment_turns_the_reset_on(monkeypatch, environment, expected):
    from django.conf import settings as django_settings

    for name in [name for name in os.environ if name.startswith("EMAIL_")]:
        monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    base = runpy.run_path(str(django_settings.BASE_DIR / "config" / "settings" / "base.py"))
    assert (base["QA_PASSWORD_RESET"], base["EMAIL_HOST"], base["EMAIL_PORT"], base["EMAIL_USE_TLS"]) == expected
    assert (base["DEFAULT_FROM_EMAIL"], base["EMAIL_TIMEOUT"]) == ("veredicto@localhost", 10)
