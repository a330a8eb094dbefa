"""A local server speaking OpenAI's Files and Batches APIs over real HTTP, beside the chat completions of
`tests.support.fake_openai` (whose scripted or default replies answer each line of a batch).

As OpenAI documents them: `POST /v1/files` (multipart, purpose "batch", a JSONL file of requests, each
`{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`), `GET /v1/files/{id}` and
`/v1/files/{id}/content`, `POST /v1/batches` (`input_file_id`, `endpoint`, `completion_window`,
`metadata`), `GET /v1/batches/{id}` and `GET /v1/batches`. A batch is `validating` when created and is
worked on when it is next retrieved: each line answered as a chat completion would be. Answers go to
the output file, lines whose reply is an HTTP error to the error file (`response.status_code` and its
body), both in OpenAI's result format, and the batch ends `completed`. Tests may make the next batches
expire after answering some of their lines (the rest in the error file with code `batch_expired`),
keep a batch in progress for some polls, and hold the reply to `POST /v1/batches` (the batch exists
on the server, the client has not heard so) to kill the client in between.

Standalone (bench/scale), answering every line validly with usage estimated at 4 characters a token:

    python -m tests.support.fake_batches --port 8094 [--polls-in-progress 1]
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections import deque
from typing import Any

from tests.support.fake_openai import FakeOpenAI, Reply, error, estimated_reply, multipart_fields

_ids = itertools.count(1)


class FakeBatches(FakeOpenAI):
    blocking = True  # a held `POST /v1/batches` waits in a thread, not in the event loop

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []  # ids of the batches created, in order
        self.expiring: deque[int] = deque()  # for the next batches: how many lines each answers before expiring
        self.polls_in_progress = 0  # how many retrieves a batch stays in_progress before it is worked on
        self.hold_create: threading.Event | None = None  # set: `POST /v1/batches` replies only once it is set
        self.create_received = threading.Event()
        self._polls: dict[str, int] = {}
        self._batch_lock = threading.Lock()

    def expire_next(self, *answered: int) -> None:
        """The next batches expire after answering this many of their lines each."""
        self.expiring.extend(answered)

    def respond(self, method: str, path: str, content_type: str, body: bytes) -> Reply:
        route = path.split("?")[0].rstrip("/")
        if route == "/v1/files" and method == "POST":
            return self._file_create(multipart_fields(content_type, body))
        if route.startswith("/v1/files/"):
            file_id, _, rest = route.removeprefix("/v1/files/").partition("/")
            if file_id not in self.files:
                return error(404, f"No such File object: {file_id}")
            return Reply(body=self.contents[file_id]) if rest == "content" else Reply(body=self.files[file_id])
        if route == "/v1/batches" and method == "POST":
            return self._batch_create(json.loads(body))
        if route == "/v1/batches" and method == "GET":
            data = [self.batches[batch_id] for batch_id in reversed(self.created)][:100]
            return Reply(body={"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                               "last_id": data[-1]["id"] if data else None, "has_more": False})
        if route.startswith("/v1/batches/") and method == "GET":
            batch_id = route.removeprefix("/v1/batches/")
            if batch_id not in self.batches:
                return error(404, f"No such Batch object: {batch_id}")
            return Reply(body=self._batch_advance(batch_id))
        return super().respond(method, path, content_type, body)

    def _file_store(self, name: str, content: bytes, purpose: str) -> dict[str, Any]:
        file_id = f"file-{next(_ids)}"
        self.files[file_id] = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                               "filename": name, "purpose": purpose, "status": "processed"}
        self.contents[file_id] = content
        return self.files[file_id]

    def _file_create(self, fields: dict[str, Any]) -> Reply:
        if fields.get("purpose") != "batch":
            return error(400, "purpose must be 'batch'")
        content = fields["file"]
        for number, line in enumerate(content.decode().splitlines(), 1):
            request = json.loads(line)
            if set(request) != {"custom_id", "method", "url", "body"} or request["url"] != "/v1/chat/completions":
                return error(400, f"line {number} is not a batch request")
        return Reply(body=self._file_store("input.jsonl", content, "batch"))

    def _batch_create(self, request: dict[str, Any]) -> Reply:
        if request.get("input_file_id") not in self.files:
            return error(400, f"No such File object: {request.get('input_file_id')}")
        if request.get("endpoint") != "/v1/chat/completions" or request.get("completion_window") != "24h":
            return error(400, "endpoint must be /v1/chat/completions and completion_window 24h")
        batch_id = f"batch_{next(_ids)}"
        with self._batch_lock:
            lines = self.contents[request["input_file_id"]].decode().splitlines()
            self.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": request["endpoint"], "errors": None,
                "input_file_id": request["input_file_id"], "completion_window": request["completion_window"],
                "status": "validating", "output_file_id": None, "error_file_id": None,
                "created_at": int(time.time()), "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "metadata": request.get("metadata") or {},
            }
            self.created.append(batch_id)
            self._polls[batch_id] = 0
        self.create_received.set()
        if self.hold_create is not None:
            self.hold_create.wait(timeout=60)
        return Reply(body=self.batches[batch_id])

    def _batch_advance(self, batch_id: str) -> dict[str, Any]:
        """The batch as retrieved now: worked on at the first retrieve after its polls in progress."""
        with self._batch_lock:
            batch = self.batches[batch_id]
            if batch["status"] not in ("validating", "in_progress"):
                return batch
            self._polls[batch_id] += 1
            if self._polls[batch_id] <= self.polls_in_progress:
                batch["status"] = "in_progress"
                return batch
            answered = self.expiring.popleft() if self.expiring else None
            outputs, errors = [], []
            for index, line in enumerate(self.contents[batch["input_file_id"]].decode().splitlines()):
                request = json.loads(line)
                if answered is not None and index >= answered:
                    errors.append({"id": f"batch_req_{next(_ids)}", "custom_id": request["custom_id"], "response": None,
                                   "error": {"code": "batch_expired",
                                             "message": "This request could not be executed before the completion window expired."}})
                    continue
                reply = self._reply(request["body"], json.dumps(request["body"]).encode())
                result = {"id": f"batch_req_{next(_ids)}", "custom_id": request["custom_id"],
                          "response": {"status_code": reply.status, "request_id": f"req_{next(_ids)}", "body": reply.body},
                          "error": None}
                (outputs if reply.status == 200 else errors).append(result)
            for key, results in (("output_file_id", outputs), ("error_file_id", errors)):
                if results:
                    content = "".join(json.dumps(result) + "\n" for result in results).encode()
                    batch[key] = self._file_store(f"{batch_id}_{key}.jsonl", content, "batch_output")["id"]
            batch["request_counts"] = {"total": len(outputs) + len(errors), "completed": len(outputs), "failed": len(errors)}
            batch["status"] = "expired" if answered is not None else "completed"
            return batch


def main() -> None:
    parser = argparse.ArgumentParser(description="A local OpenAI Files and Batches server (tests/support/fake_batches.py).")
    parser.add_argument("--port", type=int, default=8094)
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (a container network's gateway)")
    parser.add_argument(
        "--polls-in-progress", type=int, default=0, help="retrieves a batch answers in_progress before it is worked on"
    )
    args = parser.parse_args()
    server = FakeBatches(default=estimated_reply, keep_requests=False)
    server.polls_in_progress = args.polls_in_progress
    server.start(port=args.port, host=args.host)
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
