"""A real HTTP receiver for webhooks, on loopback in the test's process: it records every request
(headers and body) and answers what the test scripts, a status and an optional delay before it."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Answer:
    status: int = 200
    delay: float = 0.0  # seconds before answering (a receiver too slow for the timeout)
    body: str = "ok"
    headers: dict[str, str] = field(default_factory=dict)  # a redirect's Location, say


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)


class WebhookReceiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: deque[Answer] = deque()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.requests.append(Received(self.path, dict(self.headers.items()), body))
                    answer = receiver._script.popleft() if receiver._script else Answer()
                time.sleep(answer.delay)
                payload = answer.body.encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the sender gave up waiting (a timeout): what the test wanted

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/veredicto"

    def script(self, *answers: Answer) -> None:
        with self._lock:
            self._script.extend(answers)

    def wait_for(self, count: int, timeout: float = 30) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            assert time.monotonic() < deadline, f"{len(self.requests)} requests received, {count} expected"
            time.sleep(0.05)
        return self.requests

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main() -> None:
    """`python -m tests.support.webhook_receiver --port N`: answers 200 to every POST (the benchmark's receiver)."""
    import argparse
    from http.server import ThreadingHTTPServer as Server

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    Server(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
