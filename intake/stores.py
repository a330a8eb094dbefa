"""A drop folder's files, wherever they lie: a local folder or an S3 bucket (through boto3, at the
endpoint the folder names). Both list the folder's top level, read and write small files, download one,
and move one aside into `done/` or `failed/`."""

from __future__ import annotations

import hashlib
import os
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


def store_for(folder: DropFolder) -> Store:
    return S3Store(folder) if folder.kind == DropFolder.Kind.S3 else LocalStore(folder.path)


__all__ = ["Entry", "LocalStore", "S3Store", "Store", "store_for"]
