"""Recorded judge answers, replayed by a real OpenAI-compatible HTTP server.

A first run should show what a real model's judgments look like without a GPU or a key. So a real
model's answers to the sample calls are recorded once (`samples/recorded/*.jsonl`) and served back by
this server: the product asks it exactly as it asks any OpenAI-compatible server (the `openai` client,
the prompt, the schema, the verifier, the routing), and the server answers the request it recognises.

A request is recognised by its **fingerprint**: the SHA-256 of the parts of the request that do not
depend on the model (the messages and the answer's schema, `response_format`), canonical JSON. A request
whose fingerprint was not recorded is refused with HTTP 404 naming the fingerprint, so a changed prompt,
rubric or call fails loudly instead of being answered with another call's judgment.

One exception, for calls that come as audio: a transcriber's output can differ by a few words from one
machine to another (its int8 kernels differ by CPU), so the same sample audio gives another transcript,
hence another fingerprint, on a new machine. Each answer therefore also keeps its request's transcript
(the last user message) and the fingerprint of everything before it (`context`: the system prompt and the
schema, i.e. the rubric and the prompt). A request with the same context whose transcript is at least
`--nearest` similar (difflib's ratio, default 0.8) to a recorded one is answered with that answer; the
verifier then checks its quotes against this machine's transcript, so words the transcripts do not
share fail verification, visibly. `GET /v1/replay/stats` says how many requests were answered exactly,
how many by the nearest transcript (with the similarity) and how many were refused.

The file is JSON lines: a header record (`"kind": "header"`: which model, when, on what machine, with
which command), then one `"kind": "answer"` record per request (fingerprint, the response body as the
model's server sent it, model, date, tokens, seconds).

    python -m qa.replay --recorded FILE [--port 8738]                        # replay
    python -m qa.replay --recorded FILE --record-from URL --upstream-model M  # record: forward and keep

Recording forwards every request it does not know to the upstream server (e.g. a llama.cpp server
serving the model), appends the answer to FILE and returns it; a known one is answered from FILE.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import platform
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The request's parts that do not depend on the model: the same call, rubric and prompt give the same.
FINGERPRINT_KEYS = ("messages", "response_format")
# How the refusal of an unknown request begins (a run's error carries it).
NOT_RECORDED = "No recorded answer for request fingerprint"
# How similar a transcript must be to a recorded one, with the same context, to get its answer. The
# sample audio es-101 heard on two machines: 0.98 (two lines differ by a word or two); the closest two
# other sample calls of one rubric: 0.70 (en-101 is en-001's first six turns spoken and transcribed),
# then 0.54 and below.
NEAREST_FLOOR = 0.8


class RecordingFileError(ValueError):
    """A recorded-answers file that cannot be read: says which line and why."""


def request_fingerprint(body: dict[str, Any]) -> str:
    """The SHA-256 of the request's model-independent parts, as canonical JSON."""
    parts = {key: body.get(key) for key in FINGERPRINT_KEYS}
    canonical = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def request_transcript(body: dict[str, Any]) -> str:
    """The request's last user message: the call's transcript as the judge was sent it."""
    users = [m.get("content") for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users and isinstance(users[-1], str) else ""


def request_context(body: dict[str, Any]) -> str:
    """The fingerprint of everything but the transcript: the messages before the last one and the schema."""
    return request_fingerprint({"messages": (body.get("messages") or [])[:-1], "response_format": body.get("response_format")})


@dataclass
class Recorded:
    """A recorded-answers file read into memory: its header and its answers by fingerprint."""

    path: Path
    header: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def display_name(self) -> str:
        """How pages name the judge: the model and the day it was recorded."""
        return str(self.header.get("display") or self.header.get("model") or self.path.stem)

    def nearest(self, body: dict[str, Any], floor: float) -> tuple[dict[str, Any], float] | None:
        """The answer whose request had this context and the most similar transcript, if at least `floor`."""
        context, transcript = request_context(body), request_transcript(body)
        best: tuple[dict[str, Any], float] | None = None
        for record in self.answers.values():
            if record.get("context") != context or not isinstance(record.get("transcript"), str):
                continue
            similarity = difflib.SequenceMatcher(None, transcript, record["transcript"], autojunk=False).ratio()
            if similarity >= floor and (best is None or similarity > best[1]):
                best = (record, similarity)
        return best

    def append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.answers[record["fingerprint"]] = record
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(record, ensure_ascii=False) + "\n")


def recorded_load(path: Path) -> Recorded:
    """Read a recorded-answers file; RecordingFileError naming the line that is not a record."""
    recorded = Recorded(path=path)
    if not path.is_file():
        raise RecordingFileError(f"{path}: no such file of recorded answers.")
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise RecordingFileError(f"{path}, line {number}: not JSON ({error}).") from error
        kind = record.get("kind") if isinstance(record, dict) else None
        if kind == "header":
            recorded.header = record
        elif kind == "answer" and isinstance(record.get("fingerprint"), str) and isinstance(record.get("response"), dict):
            recorded.answers[record["fingerprint"]] = record
        else:
            raise RecordingFileError(f"{path}, line {number}: neither a header nor an answer with a fingerprint and a response.")
    if not recorded.header:
        raise RecordingFileError(f"{path}: no header record (kind \"header\") saying which model answered.")
    return recorded


def recorded_create(*, path: Path, header: dict[str, Any]) -> Recorded:
    """A new recorded-answers file holding only its header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"kind": "header", **header}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return Recorded(path=path, header=record)


def _error_body(message: str, code: str) -> dict[str, Any]:
    # OpenAI's error shape, so the openai client reads the message into its exception.
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


class _Handler(BaseHTTPRequestHandler):
    server: ReplayServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.rstrip("/") == "/v1/replay/stats":
            self._send(HTTPStatus.OK, self.server.stats)
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            header = self.server.recorded.header
            self._send(HTTPStatus.OK, {"object": "list", "data": [{"id": header.get("model", ""), "object": "model"}]})
            return
        self._send(HTTPStatus.NOT_FOUND, _error_body(f"No such path {self.path}: this server answers /v1/chat/completions.", "not_found"))

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(HTTPStatus.NOT_FOUND, _error_body(f"No such path {self.path}: this server answers /v1/chat/completions.", "not_found"))
            return
        try:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw)
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("no messages")
        except ValueError:
            self._send(HTTPStatus.BAD_REQUEST, _error_body("The request is not a chat completion: a JSON object with messages.", "invalid_body"))
            return
        fingerprint = request_fingerprint(body)
        record = self.server.recorded.answers.get(fingerprint)
        if record is None and self.server.upstream:
            record = self.server.forward(body, fingerprint)
        elif record is None and self.server.nearest_floor and (near := self.server.recorded.nearest(body, self.server.nearest_floor)):
            record, similarity = near
            self.server.count("nearest", {"recorded": record["fingerprint"], "similarity": round(similarity, 3)})
            self._send(HTTPStatus.OK, record["response"])
            return
        if record is None:
            self.server.count("refused", fingerprint)
            self._send(HTTPStatus.NOT_FOUND, _error_body(
                f"{NOT_RECORDED} {fingerprint} in {self.server.recorded.path.name}: "
                "this call, its rubric or the prompt differ from what was recorded.", "unknown_fingerprint"))  # fmt: skip
            return
        self.server.count("exact", fingerprint)
        self._send(HTTPStatus.OK, record["response"])


class ReplayServer(ThreadingHTTPServer):
    """Answers recorded fingerprints; with `upstream`, forwards the others there and records them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], recorded: Recorded, *, upstream: str = "",
                 upstream_model: str = "", verbose: bool = False, nearest_floor: float = NEAREST_FLOOR) -> None:  # fmt: skip
        super().__init__(address, _Handler)
        self.recorded = recorded
        self.upstream = upstream.rstrip("/")
        self.upstream_model = upstream_model
        self.verbose = verbose
        self.nearest_floor = nearest_floor
        self.stats: dict[str, list[Any]] = {"exact": [], "nearest": [], "refused": []}
        self._stats_lock = threading.Lock()
        self._asking: dict[str, threading.Lock] = {}

    def count(self, how: str, what: Any) -> None:
        with self._stats_lock:
            self.stats[how].append(what)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"

    def forward(self, body: dict[str, Any], fingerprint: str) -> dict[str, Any] | None:
        """Ask the upstream server, record its answer, and return the record (None if it failed).

        One question per fingerprint at a time: a client that gives up on a slow local model and asks again
        waits for the first answer instead of making the model judge the call twice and the file hold two
        answers to one request."""
        with self._stats_lock:
            asking = self._asking.setdefault(fingerprint, threading.Lock())
        with asking:
            if (known := self.recorded.answers.get(fingerprint)) is not None:
                return known
            return self._ask(body, fingerprint)

    def _ask(self, body: dict[str, Any], fingerprint: str) -> dict[str, Any] | None:
        sent = {**body, "model": self.upstream_model or body.get("model")}
        request = urllib.request.Request(f"{self.upstream}/chat/completions", data=json.dumps(sent).encode("utf-8"),
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=3600) as response:
                answer = json.load(response)
        except (urllib.error.URLError, OSError, ValueError) as error:
            print(f"upstream failed for {fingerprint}: {error}", flush=True)
            return None
        usage = answer.get("usage") or {}
        record = {
            "kind": "answer",
            "fingerprint": fingerprint,
            "context": request_context(body),
            "transcript": request_transcript(body),
            "model": answer.get("model") or sent["model"],
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
            "seconds": round(time.monotonic() - started, 1),
            "response": answer,
        }
        self.recorded.append(record)
        print(f"recorded {fingerprint}: {record['seconds']} s, {record['completion_tokens']} completion tokens", flush=True)
        return record


def replay_server_start(*, recorded: Recorded, port: int = 0, upstream: str = "", upstream_model: str = "",
                        nearest_floor: float = NEAREST_FLOOR) -> ReplayServer:  # fmt: skip
    """A replay server on loopback (port 0: any free one), serving in a daemon thread."""
    server = ReplayServer(("127.0.0.1", port), recorded, upstream=upstream, upstream_model=upstream_model,
                          nearest_floor=nearest_floor)  # fmt: skip
    threading.Thread(target=server.serve_forever, name="replay-server", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recorded", type=Path, required=True, help="the recorded-answers file (JSON lines)")
    parser.add_argument("--port", type=int, default=8738, help="the loopback port to listen on")
    parser.add_argument("--nearest", type=float, default=NEAREST_FLOOR,
                        help="answer a transcript this similar (0-1) to a recorded one of the same rubric and prompt; 0: never")
    parser.add_argument("--record-from", default="", help="record: the upstream server's base URL (…/v1)")
    parser.add_argument("--upstream-model", default="", help="record: the model name the upstream server serves")
    parser.add_argument("--display", default="", help="record, new file: how pages name the judge")
    parser.add_argument("--model", default="", help="record, new file: the model's full name")
    parser.add_argument("--command", default="", help="record, new file: the command that drives the recording")
    parser.add_argument("--evidence", default="reference", choices=("quote", "reference"),
                        help="record, new file: the evidence mode the judge asks for (the recorded judge's)")
    args = parser.parse_args(argv)
    if args.record_from and not args.recorded.exists():
        recorded = recorded_create(path=args.recorded, header={
            "model": args.model or args.upstream_model,
            "display": args.display,
            "server_model": args.upstream_model,
            "evidence_mode": args.evidence,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {platform.system()}, CPU only",
            "command": args.command,
            "fingerprint": "sha256 of canonical JSON of the request's " + " and ".join(FINGERPRINT_KEYS),
        })  # fmt: skip
    else:
        try:
            recorded = recorded_load(args.recorded)
        except RecordingFileError as error:
            parser.error(str(error))
    server = ReplayServer(("127.0.0.1", args.port), recorded, upstream=args.record_from, upstream_model=args.upstream_model,
                          nearest_floor=args.nearest)  # fmt: skip
    mode = f"recording from {args.record_from}" if args.record_from else "replaying"
    print(f"{mode} {len(recorded.answers)} answers of {recorded.display_name} on {server.base_url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
