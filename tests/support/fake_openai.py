"""A fake LLM server speaking OpenAI's Chat Completions protocol over real HTTP,
and its audio transcription protocol (`/v1/audio/transcriptions`, multipart).

Tests script its replies (status codes, Retry-After headers, bodies,
finish_reason "length", refusals) and read back the requests it received, so
the real `openai` client is exercised end to end. With nothing scripted it
answers every request validly from the request's own schema, quoting the
transcript's first line; the benchmarks use that with a latency, fixed or spread evenly by a jitter:

    python -m tests.support.fake_openai --port 8090 --latency 0.3 [--jitter 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import email.parser
import email.policy
import itertools
import json
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

_TRANSCRIPT = re.compile(r"<transcript>\n(.*?)\n</transcript>", re.DOTALL)


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)


_ids = itertools.count(1)


def completion(
    content: str | dict[str, Any] | None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    prompt_tokens: int = 900,
    completion_tokens: int = 300,
    model: str = "fake-judge",
    cached_tokens: int | None = None,
) -> Reply:
    """A 200 reply carrying one chat completion choice."""
    if isinstance(content, dict):
        content = json.dumps(content)
    return Reply(
        body={
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                # As OpenAI reports its prompt cache; absent unless given, as many servers leave it out.
                **({"prompt_tokens_details": {"cached_tokens": cached_tokens}} if cached_tokens is not None else {}),
            },
        }
    )


def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "fake", "code": None}}, headers=headers or {})


def transcription(segments: list[dict[str, Any]], *, speakers: bool = False) -> Reply:
    """A 200 verbose_json transcription: `segments` are {start, end, text[, speaker]}; the words
    (OpenAI sends them in one top-level list) are spread evenly over each segment's time."""
    words = []
    for segment in segments:
        tokens = segment["text"].split()
        step = (segment["end"] - segment["start"]) / max(len(tokens), 1)
        start = segment["start"]
        words += [
            {"word": token, "start": round(start + i * step, 3), "end": round(start + (i + 1) * step, 3)}
            for i, token in enumerate(tokens)
        ]
    body = {
        "task": "transcribe",
        "language": "english",
        "duration": max((segment["end"] for segment in segments), default=0.0),
        "text": " ".join(segment["text"] for segment in segments),
        "segments": [
            {
                "id": i,
                "start": segment["start"],
                "end": segment["end"],
                "text": segment["text"],
                **({"speaker": segment["speaker"]} if speakers and "speaker" in segment else {}),
            }
            for i, segment in enumerate(segments)
        ],
        "words": words,
    }
    return Reply(body=body)


def multipart_fields(content_type: str, body: bytes) -> dict[str, Any]:
    """A multipart/form-data body as {name: text}, with the uploaded file's bytes under `file`."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if part.get_filename():
            fields[name] = payload
        else:
            value = payload.decode()
            # Repeated fields (timestamp_granularities[]) collect into a list.
            if name not in fields:
                fields[name] = value
            else:
                earlier = fields[name] if isinstance(fields[name], list) else [fields[name]]
                fields[name] = [*earlier, value]
    return fields


def transcript_of(request: dict[str, Any]) -> str:
    match = _TRANSCRIPT.search(request["messages"][-1]["content"])
    return match.group(1) if match else ""


def answer_for(request: dict[str, Any], *, evidence: str | None = None, confidence: float = 0.95) -> dict[str, Any]:
    """A valid answer to `request`: every criterion at its scale maximum,
    quoting `evidence` (by default the transcript's first line, verbatim); in
    reference mode, citing the first turn (with `evidence` as its words)."""
    schema = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]

    def cited(item: dict[str, Any]) -> str | list[dict[str, Any]]:
        # Reference mode (an array): the first turn, whole, or `evidence` as words of it.
        if item["properties"]["evidence"].get("type") == "array":
            return [{"turn": 1, "words": evidence or ""}]
        return evidence if evidence is not None else transcript_of(request).splitlines()[0]

    return {
        "scores": {
            key: {
                "evidence": cited(item),
                "rationale": "The quoted passage shows it.",
                "value": max(value for value in item["properties"]["value"]["enum"] if value is not None),
                "confidence": confidence,
            }
            for key, item in schema.items()
        }
    }


def auto_reply(request: dict[str, Any]) -> Reply:
    return completion(answer_for(request))


def estimated_reply(request: dict[str, Any]) -> Reply:
    """Like auto_reply, with usage estimated at 4 characters a token (OpenAI's rule of thumb)."""
    answer = json.dumps(answer_for(request))
    prompt = sum(len(message["content"]) for message in request["messages"]) + len(json.dumps(request["response_format"]))
    return completion(answer, prompt_tokens=prompt // 4, completion_tokens=len(answer) // 4)


class FakeOpenAI:
    """Start with `with FakeOpenAI() as server:`; point OPENAI_BASE_URL at `server.base_url`.

    An asyncio server on a thread of its own: light enough that, in the
    benchmark, the fake LLM's own CPU does not crowd out the pipeline's.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        jitter: float = 0.0,
        default: Callable[[dict[str, Any]], Reply] = auto_reply,
        keep_requests: bool = True,
    ) -> None:
        self.latency = latency
        self.jitter = jitter  # each reply waits latency ± up to jitter seconds, uniformly (bench/scale)
        self.default = default
        self.keep_requests = keep_requests
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []  # each request's body exactly as it came (kept with `requests`)
        self._script: deque[Reply | Callable[[dict[str, Any]], Reply]] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    def script(self, *replies: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        """Queue replies for the next requests, in order; after them, the default answers."""
        with self._lock:
            self._script.extend(replies)

    def _reply(self, request: dict[str, Any], body: bytes = b"") -> Reply:
        with self._lock:
            if self.keep_requests:
                self.requests.append(request)
                self.bodies.append(body)
            scripted = self._script.popleft() if self._script else self.default
        return scripted(request) if callable(scripted) else scripted

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:  # keep-alive, as real servers do
                head = await reader.readuntil(b"\r\n\r\n")
                length, content_type = 0, ""
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                    elif name.strip().lower() == b"content-type":
                        content_type = value.strip().decode()
                body = await reader.readexactly(length) if length else b""
                if self.latency or self.jitter:
                    await asyncio.sleep(max(self.latency + random.uniform(-self.jitter, self.jitter), 0.0))
                method, path = head.split(b" ")[0].decode(), head.split(b" ")[1].decode()
                reply = await asyncio.get_running_loop().run_in_executor(
                    None, self.respond, method, path, content_type, body
                ) if self.blocking else self.respond(method, path, content_type, body)
                payload = reply.body if isinstance(reply.body, bytes) else (
                    reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                ).encode()
                headers = {"Content-Type": "application/json", "Content-Length": str(len(payload)), **reply.headers}
                lines = [f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}"]
                lines += [f"{name}: {value}" for name, value in headers.items()]
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed the connection
        finally:
            writer.close()

    # A subclass whose `respond` may wait (tests/support/fake_batches.py) answers from a thread.
    blocking = False

    def respond(self, method: str, path: str, content_type: str, body: bytes) -> Reply:
        """The reply to one HTTP request: chat completions and transcriptions, scripted or by default."""
        if content_type.startswith("multipart/form-data"):
            request = {"path": path, **multipart_fields(content_type, body)}
        else:
            request = json.loads(body or b"{}")
        return self._reply(request, body)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1"

    def start(self, port: int = 0, host: str = "127.0.0.1") -> FakeOpenAI:
        # Loopback unless told otherwise: the container test binds it to its container network's
        # gateway on this machine, the address containers reach the host by.
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        opening = asyncio.start_server(self._serve, host, port, backlog=256)
        self._server = asyncio.run_coroutine_threadsafe(opening, self._loop).result()
        return self

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        connections = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in connections:
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
        self._loop, self._server, self._thread = None, None, None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (a container network's gateway)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds before each reply")
    parser.add_argument("--jitter", type=float, default=0.0, help="± this many seconds, uniformly, on each reply")
    args = parser.parse_args()
    server = FakeOpenAI(latency=args.latency, jitter=args.jitter, default=estimated_reply, keep_requests=False)
    server.start(port=args.port, host=args.host)
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
