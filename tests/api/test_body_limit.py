"""Bodies over their limit are answered 413 before anything reads them, whatever the authentication.

The probe: a browser session (or an anonymous client with a matching CSRF cookie) streamed 250 MB to
/review/upload/, /accounts/login/ or /api/recordings/ before the answer, because the CSRF check reads
the body first; only API-key posts to /api/recordings/ were checked before reading."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client

from qa.audio import UPLOAD_OVERHEAD_BYTES
from qa.models import Recording
from tests.api.conftest import new_key
from tests.factories import UserFactory

MB = 1024 * 1024
TOKEN = "a" * 32  # a well-formed CSRF secret: the cookie and the header match
PROBE_BYTES = 250 * MB
MULTIPART = "multipart/form-data; boundary=probe"


class Unreadable:
    """A request body nothing may read: reading it fails the test at once."""

    def read(self, *args) -> bytes:
        raise AssertionError("the body was read")

    readline = read


def _client(auth: str) -> Client:
    client = Client(enforce_csrf_checks=True, HTTP_ACCEPT_LANGUAGE="en")
    if auth == "api-key":
        client.defaults["HTTP_AUTHORIZATION"] = f"Api-Key {new_key('crm')[1]}"
        return client
    client.cookies[settings.CSRF_COOKIE_NAME] = TOKEN
    client.defaults["HTTP_X_CSRFTOKEN"] = TOKEN
    if auth == "session":
        client.force_login(UserFactory(groups=["Supervisors"], is_superuser=True))
    return client


def _post(client: Client, path: str, *, length: int, content_type: str = MULTIPART):
    environ = {"CONTENT_LENGTH": str(length), "CONTENT_TYPE": content_type, "wsgi.input": Unreadable()}
    return client.generic("POST", path, b"", content_type, **environ)


@pytest.mark.django_db
@pytest.mark.parametrize("auth", ["session", "anonymous-with-csrf-cookie", "api-key"])
@pytest.mark.parametrize("path", ["/review/upload/", "/api/recordings/", "/admin/qa/recording/add/"])
def test_an_upload_over_the_audio_limit_is_a_413_unread(auth, path):
    limit = settings.QA_AUDIO_MAX_BYTES + UPLOAD_OVERHEAD_BYTES
    response = _post(_client(auth), path, length=PROBE_BYTES)

    assert response.status_code == 413
    message = f"The request body is {PROBE_BYTES} bytes; the limit is {limit} bytes."
    if path.startswith("/api/"):
        assert response.json() == {"detail": message}
    else:
        assert message in response.content.decode()
    assert not Recording.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("auth", ["session", "anonymous-with-csrf-cookie", "api-key"])
@pytest.mark.parametrize(
    "path, content_type",
    [
        ("/accounts/login/", MULTIPART),
        ("/accounts/login/", "application/x-www-form-urlencoded"),
        ("/api/recordings/", "application/json"),  # a transcript: the body limit, not the audio's
        ("/api/recordings/batch/", "application/json"),
        ("/api/recordings/batch/", MULTIPART),
        ("/review/upload/", "application/x-www-form-urlencoded"),  # no file: no room for one
    ],
)
def test_any_other_body_over_qa_max_body_bytes_is_a_413_unread(auth, path, content_type):
    length = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
    response = _post(_client(auth), path, length=length, content_type=content_type)

    assert response.status_code == 413
    assert f"the limit is {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes" in response.content.decode()


@pytest.mark.django_db
def test_the_413_page_is_in_the_visitors_language():
    client = _client("anonymous-with-csrf-cookie")
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "es"
    response = _post(client, "/accounts/login/", length=PROBE_BYTES)
    assert response.status_code == 413
    assert "El cuerpo de la petición tiene" in response.content.decode()


@pytest.mark.django_db
def test_a_body_within_the_limit_is_read_as_before(settings):
    """The limit is the Content-Length's: at the limit, the view reads the body and answers itself."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client = _client("anonymous-with-csrf-cookie")
    body = b"username=nobody&password=wrong".ljust(1000, b"x")
    response = client.generic("POST", "/accounts/login/", body, "application/x-www-form-urlencoded")
    assert response.status_code == 200  # the login form again, with its error
    assert b"Your username and password didn't match" in response.content


# --- Against a live server: the answer comes while the client is still to send the body -------------


def _raw_post(url: str, path: str, headers: dict[str, str], *, timeout: float = 10.0) -> bytes:
    """Send a request's head claiming 250 MB, and only its first 64 KB of body; return the status line."""
    address = urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=timeout) as connection:
        head = [f"POST {path} HTTP/1.1", f"Host: {address.netloc}", f"Content-Length: {PROBE_BYTES}",
                f"Content-Type: {MULTIPART}", *(f"{name}: {value}" for name, value in headers.items())]  # fmt: skip
        connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + b"--probe\r\n" + b"\0" * (64 * 1024))
        received = b""
        while b"\r\n" not in received:
            chunk = connection.recv(4096)  # a server reading the body first answers nothing: a timeout
            if not chunk:
                break
            received += chunk
    return received.split(b"\r\n", 1)[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "auth, path",
    [
        ("session", "/review/upload/"),
        ("anonymous-with-csrf-cookie", "/accounts/login/"),
        ("api-key", "/api/recordings/"),
    ],
)
def test_a_live_server_answers_413_before_the_body_is_sent(live_server, auth, path):
    headers = {"Accept-Language": "en"}
    if auth == "api-key":
        headers["Authorization"] = f"Api-Key {new_key('crm')[1]}"
    else:
        cookies = {settings.CSRF_COOKIE_NAME: TOKEN}
        if auth == "session":
            client = Client()
            client.force_login(UserFactory(groups=["Supervisors"]))
            cookies[settings.SESSION_COOKIE_NAME] = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
        headers["X-CSRFToken"] = TOKEN

    status = _raw_post(live_server.url, path, headers)

    assert status.split(b" ")[1] == b"413", status
