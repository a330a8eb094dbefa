"""The intakes' parts: a workspace with a published rubric, a real two-channel call spoken by espeak-ng
(the agent on the right, as Twilio records the dialled agent's leg), and a local HTTP server playing
Twilio's part: it serves recordings only with the account's credentials, both channels only when asked
(`RequestedChannels=2`, as Twilio does), and can hold a download or redirect it."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.calls import SCRIPTS, sox, stereo_call, tools_missing

ACCOUNT_SID = "AC" + "1" * 32
TOKEN = "twilio-test-token-0123456789abcdef"
TOKEN_VARIABLE = "ACME_TWILIO_TOKEN"


@pytest.fixture(scope="session")
def stereo_wav(tmp_path_factory) -> Path:
    if missing := tools_missing():
        pytest.fail(f"Missing {', '.join(missing)}: install the Debian packages espeak-ng and sox (scripts/test does).")
    path = tmp_path_factory.mktemp("calls") / "call.wav"
    stereo_call(SCRIPTS["en"][:2], language="en", out=path, agent_channel="right")
    return path


@pytest.fixture(scope="session")
def mono_wav(stereo_wav, tmp_path_factory) -> Path:
    """The same call mixed down, as Twilio serves a dual-channel recording unless both channels are asked for."""
    path = tmp_path_factory.mktemp("calls") / "mono.wav"
    sox(stereo_wav, path, "remix", "1,2")
    return path


@dataclass
class FakeTwilio:
    stereo: Path
    mono: Path
    account_sid: str = ACCOUNT_SID
    token: str = TOKEN
    requests: list[dict] = field(default_factory=list)
    hold_first: float = 0.0  # seconds the first download waits before its first byte
    redirect_to: str = ""  # a base URL the media is redirected to
    base_url: str = ""

    def recording_url(self, sid: str) -> str:
        return f"{self.base_url}/2010-04-01/Accounts/{self.account_sid}/Recordings/{sid}"

    def downloads(self) -> list[dict]:
        return [request for request in self.requests if request["status"] == 200]


@pytest.fixture
def fake_twilio(stereo_wav, mono_wav) -> Iterator[FakeTwilio]:
    twilio = FakeTwilio(stereo=stereo_wav, mono=mono_wav)
    expected = "Basic " + base64.b64encode(f"{twilio.account_sid}:{twilio.token}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            record = {"path": parts.path, "query": query, "auth": self.headers.get("Authorization", "")}
            twilio.requests.append(record)
            if twilio.redirect_to and not parts.path.startswith("/media/"):
                record["status"] = 302
                self.send_response(302)
                self.send_header("Location", f"{twilio.redirect_to}/media{parts.path}?{parts.query}")
                self.end_headers()
                return
            if not parts.path.startswith("/media/") and record["auth"] != expected:
                record["status"] = 401
                self.send_response(401)
                self.end_headers()
                return
            if not parts.path.endswith(".wav"):
                record["status"] = 404
                self.send_response(404)
                self.end_headers()
                return
            body = (twilio.stereo if query.get("RequestedChannels") == ["2"] else twilio.mono).read_bytes()
            record["status"] = 200
            if twilio.hold_first and len(twilio.downloads()) == 1:
                time.sleep(twilio.hold_first)
            self.send_response(200)
            self.send_header("Content-Type", "audio/x-wav")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    twilio.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield twilio
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def acme(db):
    from access.services import workspace_create
    from tests.factories import published_rubric

    workspace = workspace_create(slug="acme")
    rubric = published_rubric(slug="care", workspace=workspace)
    return workspace, rubric
