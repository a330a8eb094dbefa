"""A drop folder's files, wherever they lie: a local folder, an S3 bucket (through boto3, at the
endpoint the folder names) or a folder on an SFTP server (through asyncssh). Each lists the folder's top
level, reads and writes small files, downloads one, and moves one aside into `done/` or `failed/`; a
store is closed when its user is done with it (an SFTP store holds one connection until then)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from intake.jobs import FileGone, IntakeError
from intake.models import DropFolder, secret_value

CHUNK = 1 << 20


@dataclass(frozen=True)
class Entry:
    name: str  # relative to the folder, top level only
    size: int
    etag: str = ""  # S3's; a local file has none


class Store(Protocol):
    def list(self) -> list[Entry]: ...
    def read_text(self, name: str) -> str: ...
    def checksum(self, entry: Entry) -> str: ...
    def download(self, name: str, out: IO[bytes]) -> str: ...
    def move(self, name: str, to: str) -> None: ...
    def write_text(self, name: str, text: str) -> None: ...
    def close(self) -> None: ...


class LocalStore:
    def __init__(self, path: str) -> None:
        self.root = Path(path)

    def list(self) -> list[Entry]:
        try:
            with os.scandir(self.root) as entries:
                return [Entry(e.name, e.stat().st_size) for e in entries if e.is_file() and not e.name.startswith(".")]
        except OSError as error:
            raise IntakeError(f"Cannot list {self.root}: {error}.", transient=True) from None

    def read_text(self, name: str) -> str:
        return (self.root / name).read_text(encoding="utf-8-sig")

    def checksum(self, entry: Entry) -> str:
        digest = hashlib.sha256()
        with (self.root / entry.name).open("rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
        return f"sha256:{digest.hexdigest()}"

    def download(self, name: str, out: IO[bytes]) -> str:
        digest = hashlib.sha256()
        try:
            with (self.root / name).open("rb") as handle:
                while chunk := handle.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        except FileNotFoundError:
            raise FileGone(f"{name} is no longer in the folder.") from None
        out.flush()
        out.seek(0)
        return f"sha256:{digest.hexdigest()}"

    def move(self, name: str, to: str) -> None:
        (self.root / to).mkdir(exist_ok=True)
        try:
            os.replace(self.root / name, self.root / to / name)
        except FileNotFoundError:
            pass  # moved already (a move repeated after a crash)

    def write_text(self, name: str, text: str) -> None:
        target = self.root / name
        target.parent.mkdir(exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)

    def close(self) -> None:
        pass


class S3Store:
    def __init__(self, folder: DropFolder) -> None:
        import boto3
        from botocore.config import Config

        self.bucket = folder.bucket
        self.prefix = folder.prefix.strip("/") + "/" if folder.prefix.strip("/") else ""
        self.client = boto3.client(
            "s3",
            endpoint_url=folder.endpoint_url or None,
            region_name=folder.region or None,
            aws_access_key_id=secret_value(folder.access_key_variable) or None,
            aws_secret_access_key=secret_value(folder.secret_key_variable) or None,
            config=Config(s3={"addressing_style": "path"} if folder.endpoint_url else {}, retries={"max_attempts": 2}),
        )


    def list(self) -> list[Entry]:
        from botocore.exceptions import BotoCoreError, ClientError

        found = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix, Delimiter="/"
            ):
                for item in page.get("Contents", []):
                    name = item["Key"][len(self.prefix) :]
                    if name and not name.startswith("."):
                        found.append(Entry(name, item["Size"], item["ETag"].strip('"')))
        except (BotoCoreError, ClientError) as error:
            raise IntakeError(f"Cannot list s3://{self.bucket}/{self.prefix}: {error}.", transient=True) from None
        return found

    def read_text(self, name: str) -> str:
        body = self.client.get_object(Bucket=self.bucket, Key=self.prefix + name)["Body"].read()
        return body.decode("utf-8-sig")

    def checksum(self, entry: Entry) -> str:
        return f"etag:{entry.etag}:{entry.size}"  # what S3 keeps of an object's content, without reading it

    def download(self, name: str, out: IO[bytes]) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.prefix + name)
            for chunk in answer["Body"].iter_chunks(CHUNK):
                out.write(chunk)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "NoSuchKey":
                raise FileGone(f"{name} is no longer in the bucket.") from None
            raise IntakeError(f"Cannot fetch {name}: {error}.", transient=True) from None
        except BotoCoreError as error:
            raise IntakeError(f"Cannot fetch {name}: {error}.", transient=True) from None
        out.flush()
        out.seek(0)
        return f"etag:{answer['ETag'].strip(chr(34))}:{answer['ContentLength']}"

    def move(self, name: str, to: str) -> None:
        from botocore.exceptions import ClientError

        key = self.prefix + name
        try:
            self.client.copy_object(Bucket=self.bucket, Key=f"{self.prefix}{to}/{name}", CopySource={"Bucket": self.bucket, "Key": key})
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return  # moved already
            raise
        self.client.delete_object(Bucket=self.bucket, Key=key)

    def write_text(self, name: str, text: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self.prefix + name, Body=text.encode(), ContentType="text/plain")

    def close(self) -> None:
        self.client.close()


class SFTPStore:
    """A folder on an SFTP server, over one SSH connection opened at the first use and kept until close().
    The server's host key must be in the folder's known_hosts file; nothing else of the worker's own SSH
    setup is used (no ~/.ssh/config, no default keys, no agent), so a folder logs in only as it says.

    asyncssh is asynchronous and a worker is not: the store runs its own event loop, one call at a time."""

    def __init__(self, folder: DropFolder) -> None:
        self.folder = folder
        self.root = folder.path.rstrip("/") or "."
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connection = None
        self._sftp = None
        self._server = f"sftp://{folder.host}:{folder.port}"

    def _run(self, operation, what: str):
        import asyncssh

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        try:
            return self._loop.run_until_complete(operation())
        except asyncssh.SFTPNoSuchFile:
            raise
        except (OSError, asyncssh.Error, ValueError) as error:  # ValueError: a key or known_hosts file that does not read
            reason = (getattr(error, "reason", "") or str(error) or type(error).__name__).rstrip(".")
            raise IntakeError(f"Cannot {what} {self.root} on {self._server}: {reason}.", transient=True) from None

    async def _client(self):
        import asyncssh

        if self._sftp is None:
            folder = self.folder
            self._connection = await asyncssh.connect(
                folder.host, port=folder.port, username=folder.username, known_hosts=folder.known_hosts_file,
                client_keys=[folder.key_file] if folder.key_file else None,
                password=secret_value(folder.password_variable) or None, agent_path=None, config=[],
                connect_timeout=30, login_timeout=30,
            )  # fmt: skip
            self._sftp = await self._connection.start_sftp_client()
        return self._sftp

    def _path(self, name: str) -> str:
        return posixpath.join(self.root, name)

    def list(self) -> list[Entry]:
        import asyncssh

        async def listing():
            sftp = await self._client()
            return [
                Entry(item.filename, item.attrs.size or 0)
                for item in await sftp.readdir(self.root)
                if not item.filename.startswith(".") and stat.S_ISREG(item.attrs.permissions or 0)
            ]

        try:
            return self._run(listing, "list")
        except asyncssh.SFTPNoSuchFile:
            raise IntakeError(f"The folder {self.root} is not on {self._server}.", transient=True) from None

    def read_text(self, name: str) -> str:
        async def read():
            async with (await self._client()).open(self._path(name), "rb") as handle:
                return await handle.read()

        return self._run(read, f"read {name} in").decode("utf-8-sig")

    def _copy(self, name: str, out: IO[bytes] | None) -> str:
        import asyncssh

        async def copy():
            digest = hashlib.sha256()
            async with (await self._client()).open(self._path(name), "rb") as handle:
                while chunk := await handle.read(CHUNK):
                    digest.update(chunk)
                    if out is not None:
                        out.write(chunk)
            return f"sha256:{digest.hexdigest()}"

        try:
            return self._run(copy, f"read {name} in")
        except asyncssh.SFTPNoSuchFile:
            raise FileGone(f"{name} is no longer on the server.") from None

    def checksum(self, entry: Entry) -> str:
        # SFTP has no checksum of its own: the file is read, as a local one is.
        return self._copy(entry.name, None)

    def download(self, name: str, out: IO[bytes]) -> str:
        checksum = self._copy(name, out)
        out.flush()
        out.seek(0)
        return checksum

    def move(self, name: str, to: str) -> None:
        import asyncssh

        async def move():
            sftp = await self._client()
            await sftp.makedirs(self._path(to), exist_ok=True)
            try:
                await _rename(sftp, self._path(name), self._path(f"{to}/{name}"))
            except asyncssh.SFTPNoSuchFile:
                pass  # moved already (a move repeated after a crash)

        self._run(move, f"move {name} into {to}/ of")

    def write_text(self, name: str, text: str) -> None:
        async def write():
            sftp = await self._client()
            directory, base = posixpath.split(self._path(name))
            await sftp.makedirs(directory, exist_ok=True)
            partial = posixpath.join(directory, f".{base}.partial")
            async with sftp.open(partial, "wb") as handle:
                await handle.write(text.encode())
            await _rename(sftp, partial, self._path(name))

        self._run(write, f"write {name} in")

    def close(self) -> None:
        if self._loop is None:
            return
        if self._connection is not None:
            self._connection.close()
            self._loop.run_until_complete(self._connection.wait_closed())
        self._loop.close()
        self._loop = self._connection = self._sftp = None


async def _rename(sftp, old: str, new: str) -> None:
    """OpenSSH's rename that replaces the target (a reason written again, a file dropped again); SFTP's
    own, which refuses to, on a server without the extension."""
    import asyncssh

    try:
        await sftp.posix_rename(old, new)
    except asyncssh.SFTPOpUnsupported:
        await sftp.rename(old, new)


def store_for(folder: DropFolder) -> Store:
    if folder.kind == DropFolder.Kind.S3:
        return S3Store(folder)
    if folder.kind == DropFolder.Kind.SFTP:
        return SFTPStore(folder)
    return LocalStore(folder.path)


__all__ = ["Entry", "LocalStore", "S3Store", "SFTPStore", "Store", "store_for"]
