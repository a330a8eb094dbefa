"""A fake LLM server speaking OpenAI's Chat Completions protocol over real HTTP.

Tests script its replies (status codes, Retry-After headers, bodies,
finish_reason "length", refusals) and read back the requests it received, so
the real `openai` client is exercised end to end. With nothing scripted it
answers every request validly from the request's own schema, quoting the
transcript's first line; the benchmark uses that with a fixed latency:

    python -m tests.support.fake_openai --port 8090 --latency 0.3
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TRANSCRIPT = re.compile(r"<transcript>\n(.*?)\n</transcript>", re.DOTALL)


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | str = ""
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
            },
        }
    )


def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "fake", "code": None}}, headers=headers or {})


def transcript_of(request: dict[str, Any]) -> str:
    match = _TRANSCRIPT.search(request["messages"][-1]["content"])
    return match.group(1) if match else ""


def answer_for(request: dict[str, Any], *, evidence: str | None = None, confidence: float = 0.95) -> dict[str, Any]:
    """A valid answer to `request`: every criterion at its scale maximum,
    quoting `evidence` (by default the transcript's first line, verbatim)."""
    schema = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]
    quote = evidence if evidence is not None else transcript_of(request).splitlines()[0]
    return {
        "scores": {
            key: {
                "evidence": quote,
                "rationale": "The quoted passage shows it.",
                "value": max(item["properties"]["value"]["enum"]),
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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the benchmark opens dozens of connections at once


class FakeOpenAI:
    """Start with `with FakeOpenAI() as server:`; point OPENAI_BASE_URL at `server.base_url`."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        default: Callable[[dict[str, Any]], Reply] = auto_reply,
        keep_requests: bool = True,
    ) -> None:
        self.latency = latency
        self.keep_requests = keep_requests
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self._script: deque[Reply | Callable[[dict[str, Any]], Reply]] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def script(self, *replies: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        """Queue replies for the next requests, in order; after them, the default answers."""
        with self._lock:
            self._script.extend(replies)

    def _reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            if self.keep_requests:
                self.requests.append(request)
            scripted = self._script.popleft() if self._script else self.default
        return scripted(request) if callable(scripted) else scripted

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start the server first"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self, port: int = 0) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if fake.latency:
                    time.sleep(fake.latency)
                reply = fake._reply(json.loads(body or b"{}"))
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                data = payload.encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `requests`
                pass

        self._httpd = _Server(("127.0.0.1", port), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds before each reply")
    args = parser.parse_args()
    server = FakeOpenAI(latency=args.latency, default=estimated_reply, keep_requests=False).start(port=args.port)
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
