"""A real OpenID Connect provider on loopback for the single sign-on tests: django-oidc-provider in its own
Django site (tests/support/oidc_idp: settings, URLconf, SQLite database in a temporary folder), started as a
second process and stopped after. Clients and people are registered through its management commands, as
an operator would at their identity provider."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent.parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class IdentityProvider:
    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.site_url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_"))},
            "DJANGO_SETTINGS_MODULE": "tests.support.oidc_idp.settings",
            "IDP_DATABASE": str(folder / "idp.sqlite3"),
            "IDP_SITE_URL": self.site_url,
            "PYTHONPATH": str(ROOT),
        }
        self.log = folder / "idp.log"
        self._process: subprocess.Popen | None = None

    # What an operator copies from the provider's discovery document into Veredicto's settings.
    @property
    def issuer(self) -> str:
        return f"{self.site_url}/openid"

    def discovery(self) -> dict:
        return requests.get(f"{self.issuer}/.well-known/openid-configuration", timeout=10).json()

    def manage(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "django", *args], env=self.env, cwd=ROOT, check=True, capture_output=True)

    def start(self) -> IdentityProvider:
        self.manage("migrate", "--noinput")
        self.manage("creatersakey")  # the key it signs ID tokens with (RS256), published at /openid/jwks
        with self.log.open("wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
                env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the identity provider exited: {self.log.read_text()}")
            try:
                if requests.get(f"{self.issuer}/jwks", timeout=1).status_code == 200:
                    return self
            except requests.ConnectionError:
                time.sleep(0.2)
        raise RuntimeError(f"the identity provider did not answer: {self.log.read_text()}")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)

    def register_client(self, *, client_id: str, client_secret: str, redirect_uri: str, jwt_alg: str = "RS256") -> None:
        self.manage(
            "idp_client", "--client-id", client_id, "--client-secret", client_secret, "--redirect-uri", redirect_uri,
            "--jwt-alg", jwt_alg,
        )  # fmt: skip

    def set_user(self, username: str, *, password: str, email: str = "", groups: tuple[str, ...] = (), **names: str) -> None:
        args = ["idp_user", username, "--password", password, "--email", email]
        args += [f"--first-name={names.get('first_name', '')}", f"--last-name={names.get('last_name', '')}"]
        for group in groups:
            args += ["--group", group]
        self.manage(*args)
