"""A real SFTP server on loopback: asyncssh's, on an event loop in a thread of its own, serving one folder
(chrooted) to one user who logs in with a key or a password. It writes the files a drop folder names:
the user's private key and a known_hosts file holding the server's host key.

    with SFTPServer(root=tmp / "sftp", files=tmp / "ssh") as server:
        server.port, server.key_file, server.known_hosts_file
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import asyncssh

USER = "five9"
PASSWORD = "sftp-test-password-0123"


class SFTPServer:
    def __init__(self, *, root: Path, files: Path, user: str = USER, password: str = PASSWORD) -> None:
        self.root, self.files, self.user, self.password = root, files, user, password
        self.root.mkdir(parents=True, exist_ok=True)
        self.files.mkdir(parents=True, exist_ok=True)
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")
        self.key_file = self.files / "client_ed25519"
        self.known_hosts_file = self.files / "known_hosts"
        self.port = 0
        self.logins: list[str] = []  # each connection's user, once logged in
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._listener: asyncssh.SSHAcceptor | None = None

    def start(self) -> SFTPServer:
        self._thread.start()
        self._listener = asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(30)
        self.port = self._listener.get_port()
        self.client_key.write_private_key(str(self.key_file))
        self.key_file.chmod(0o600)
        self.known_hosts_file.write_text(f"[127.0.0.1]:{self.port} {self.host_key.export_public_key().decode()}")
        return self

    async def _listen(self) -> asyncssh.SSHAcceptor:
        server = self
        client_public = self.client_key.export_public_key().decode()

        class Accounts(asyncssh.SSHServer):
            def begin_auth(self, username: str) -> bool:
                return True

            def public_key_auth_supported(self) -> bool:
                return True

            def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
                return username == server.user and key.export_public_key().decode() == client_public

            def password_auth_supported(self) -> bool:
                return True

            def validate_password(self, username: str, password: str) -> bool:
                return username == server.user and password == server.password

            def auth_completed(self) -> None:
                server.logins.append(server.user)

        return await asyncssh.listen(
            "127.0.0.1", 0, server_host_keys=[self.host_key], server_factory=Accounts,
            sftp_factory=lambda channel: asyncssh.SFTPServer(channel, chroot=str(self.root)), allow_scp=False,
        )  # fmt: skip

    def stop(self) -> None:
        async def close() -> None:
            self._listener.close()
            await self._listener.wait_closed()

        if self._listener is not None:
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    def __enter__(self) -> SFTPServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
