"""The judge's LLM backends, all behind the `openai` client's Chat Completions.

- `openai`: OPENAI_API_KEY set and no OPENAI_BASE_URL.
- `openai-compatible`: OPENAI_BASE_URL set (vLLM, llama.cpp server, Ollama...).
- `local`: neither set; the bundled GGUF model on a loopback llama.cpp server
  (see qa.local_model), so transcripts never leave the machine by default.

The client never retries by itself: retries belong to the Celery task, which
can wait without holding a worker and knows how many attempts a run has had.

Evidence mode (qa.answer: quotes, or turn references whose turn is an enum of
the transcript's numbers): a named judge's `evidence_mode`, or for the
environment's judge QA_EVIDENCE_MODE; "auto" means reference for OpenAI's own
API (strict mode holds its answer to the schema's enums) and quote everywhere
else: an OpenAI-compatible server may accept the schema and ignore it, and the
local model, whose llama.cpp grammar does hold it to the enum, is a small model
that copies words better than it counts turns. Measured on the labelled set's
five English calls (bench/judge_quality/README.md), Qwen2.5-Coder-1.5B's quotes
verified 25 of 30 and its references 10 of 30, most with the right words at the
wrong turn; and a reference with no words verifies on the turn's speaker alone,
a weak check for a model that cannot read the call.
"""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import json
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import openai
from django.conf import settings

from qa.answer import COMPACT_SHAPE, EVIDENCE_MODES, QUOTE, REFERENCE, STANDARD_SHAPE, UNBOUNDED_SHAPE, AnswerShape
from qa.llm_errors import LLMError

if TYPE_CHECKING:
    from qa.models import Judge

OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
# Statuses worth another try: timeouts, conflicts, rate limits, server errors.
TRANSIENT_STATUSES = {408, 409, 429}


@dataclass(frozen=True)
class Backend:
    name: str
    model: str
    client: openai.OpenAI
    # The answer's shape: OpenAI's strict mode refuses maxLength, local decoders
    # need it, and a small model on this machine's CPU needs short texts.
    answer_shape: AnswerShape


@dataclass(frozen=True)
class Completion:
    content: str | None
    refusal: str | None
    finish_reason: str
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_ms: int
    # Of the prompt's tokens, those the server read from its prompt cache (usage.prompt_tokens_details.cached_tokens);
    # None where the server does not say.
    cached_tokens: int | None = None


def cached_tokens_of(usage: Any) -> int | None:
    """`usage.prompt_tokens_details.cached_tokens` (an object from the client, or a dict from a batch's output line)."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else getattr(usage, "prompt_tokens_details", None)
    if details is None:
        return None
    cached = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
    return int(cached) if cached is not None else None


class _Configuration(NamedTuple):
    """What selects and builds a backend: a named judge's fields or the environment's (a tuple: cheap to hash)."""

    api_key: str
    base_url: str
    model: str
    local_model_path: str
    evidence_mode: str = "auto"
    local_model: str = ""  # a qa.local_model.NAMED_MODELS name, when local_model_path is blank


def evidence_mode_resolve(*, chosen: str, base_url: str, api_key: str) -> str:
    """`chosen` (quote, reference or auto) for a backend: auto is reference for OpenAI's API (no base
    URL, a key), else quote (see the module's docstring for why the local model quotes)."""
    if chosen in EVIDENCE_MODES:
        return chosen
    if chosen != "auto":
        raise LLMError(f"The evidence mode is {chosen!r}: set it to auto, quote or reference.", transient=False)
    return REFERENCE if api_key and not base_url else QUOTE


def _answer_shape(configuration: _Configuration) -> AnswerShape:
    if configuration.base_url:
        shape = STANDARD_SHAPE
    elif configuration.api_key:
        shape = UNBOUNDED_SHAPE
    else:
        shape = local_answer_shape()
    mode = evidence_mode_resolve(
        chosen=configuration.evidence_mode, base_url=configuration.base_url, api_key=configuration.api_key
    )
    return dataclasses.replace(shape, evidence_mode=mode)


@functools.cache
def _backend(configuration: _Configuration) -> Backend:
    # Cached per configuration, so every call in a process shares one client
    # and its connection pool.
    api_key, base_url, model = configuration.api_key, configuration.base_url, configuration.model
    timeout = settings.QA_LLM_TIMEOUT
    shape = _answer_shape(configuration)
    if base_url:
        if not model:
            raise LLMError("OPENAI_BASE_URL is set: set QA_JUDGE_MODEL to the model that server serves.", transient=False)
        client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url, max_retries=0, timeout=timeout)
        return Backend(name="openai-compatible", model=model, client=client, answer_shape=shape)
    if api_key:
        client = openai.OpenAI(api_key=api_key, max_retries=0, timeout=timeout)
        return Backend(name="openai", model=model or OPENAI_DEFAULT_MODEL, client=client, answer_shape=shape)
    from qa.local_model import local_server_ensure  # imports xllamacpp: only when it is used

    server = local_server_ensure(model_path=configuration.local_model_path, model_name=configuration.local_model)
    client = openai.OpenAI(api_key="local", base_url=f"{server.base_url}/v1", max_retries=0, timeout=timeout)
    return Backend(name="local", model=server.model, client=client, answer_shape=shape)


def local_answer_shape() -> AnswerShape:
    """The local backend's answer shape (QA_LOCAL_ANSWER_SHAPE): compact by default, for a small model on CPU."""
    shapes = {"compact": COMPACT_SHAPE, "standard": STANDARD_SHAPE}
    if settings.QA_LOCAL_ANSWER_SHAPE not in shapes:
        raise LLMError(
            f"QA_LOCAL_ANSWER_SHAPE is {settings.QA_LOCAL_ANSWER_SHAPE!r}: set it to compact or standard.", transient=False
        )
    return shapes[settings.QA_LOCAL_ANSWER_SHAPE]


def _configuration(judge: Judge | None) -> _Configuration:
    """A named judge's configuration, or, without one, the environment's (read
    at call time, so tests and operators can repoint it without restarting)."""
    if judge is None:
        return _Configuration(
            os.environ.get("OPENAI_API_KEY", ""),
            os.environ.get("OPENAI_BASE_URL", ""),
            settings.QA_JUDGE_MODEL,
            settings.QA_LOCAL_MODEL_PATH,
            settings.QA_EVIDENCE_MODE,
            settings.QA_LOCAL_MODEL,
        )
    if reason := judge.unavailable_reason:
        raise LLMError(reason, transient=False)
    if judge.backend == judge.Backend.OPENAI_COMPATIBLE:
        # No key variable and no base URL would fall through to the local model: say so instead.
        if not judge.base_url and not judge.api_key:
            raise LLMError(f"Judge {judge.name} needs a base URL or an API key variable.", transient=False)
        return _Configuration(judge.api_key, judge.base_url, judge.model, "", judge.evidence_mode)
    return _Configuration("", "", "", judge.gguf_path if judge.backend == judge.Backend.GGUF else "", judge.evidence_mode)


def backend_get(judge: Judge | None = None) -> Backend:
    """The backend of a named judge, or, without one, the backend the environment selects."""
    return _backend(_configuration(judge))


def answer_shape_get(judge: Judge | None = None) -> AnswerShape:
    """The shape of the answers `judge` is asked for, without building its
    client or starting the local model (a web process asks this)."""
    return _answer_shape(_configuration(judge))


def retry_after_seconds(headers: Any) -> float | None:
    """The server's Retry-After (seconds, milliseconds or an HTTP date), if any."""
    if headers is None:
        return None
    if (value := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(value) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(parsed.timestamp() - time.time(), 0.0) if parsed else None


# --- The judge's context (issue 26) ---
# How a server says the prompt is longer than its context: OpenAI and vLLM ("maximum context length",
# code context_length_exceeded), llama.cpp ("exceeds the available context size").
_CONTEXT_REFUSAL = re.compile(r"context[ _]length|context size|maximum context|context window", re.IGNORECASE)
# Characters per token taken to estimate a prompt before it is sent: more than BPE tokenizers give
# on average (3 to 4.5 in Spanish and English), so the estimate errs short and never refuses a
# transcript that fits; one that fits the estimate but not the context is refused by the server.
CHARS_PER_TOKEN = 6


def context_limit(backend: Backend) -> tuple[int, str] | None:
    """The backend's context in tokens, with the setting that says it; None when unknown."""
    if backend.name == "local":
        return settings.QA_LOCAL_MODEL_CONTEXT, "QA_LOCAL_MODEL_CONTEXT"
    if settings.QA_JUDGE_CONTEXT_TOKENS:
        return settings.QA_JUDGE_CONTEXT_TOKENS, "QA_JUDGE_CONTEXT_TOKENS"
    return None


def context_problem(*, backend: Backend, messages: list[dict[str, str]], max_tokens: int) -> str:
    """Why this prompt and its answer cannot fit the judge's context ("" when they may): a run's
    reason, stated before any call rather than as a provider's error after one."""
    limit = context_limit(backend)
    if limit is None:
        return ""
    tokens, setting = limit
    estimate = sum(len(message["content"]) for message in messages) // CHARS_PER_TOKEN
    if estimate + max_tokens <= tokens:
        return ""
    return (
        f"The transcript is too long for the judge's context: the prompt is at least about {estimate} tokens "
        f"and the answer needs up to {max_tokens}, but {backend.model}'s context holds {tokens} ({setting})."
    )


def _context_refused(backend_model: str, message: str) -> LLMError:
    return LLMError(
        f"The transcript is too long for the judge's context: {backend_model} refused the prompt ({message}).",
        transient=False,
    )
# --- end of the judge's context ---


def _error(error: openai.OpenAIError, model: str = "the model") -> LLMError:
    if isinstance(error, openai.APIStatusError) and error.status_code in (400, 413) and _CONTEXT_REFUSAL.search(
        error.message or ""
    ):
        return _context_refused(model, error.message)
    if isinstance(error, openai.APITimeoutError):
        return LLMError(f"The LLM call timed out after {settings.QA_LLM_TIMEOUT:g} s.", transient=True)
    if isinstance(error, openai.APIConnectionError):
        return LLMError(f"Cannot reach the LLM server: {error}", transient=True)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        transient = status in TRANSIENT_STATUSES or status >= 500
        return LLMError(
            f"The LLM server answered HTTP {status}: {error.message}",
            transient=transient,
            retry_after=retry_after_seconds(error.response.headers) if transient else None,
        )
    return LLMError(f"The LLM call failed: {error}", transient=False)


def llm_error(error: openai.OpenAIError, model: str = "the model") -> LLMError:
    """An `openai` client error as an LLMError, transient or not (the batch path's calls too)."""
    return _error(error, model)


def request_constraint(backend: Backend, schema: dict[str, Any]) -> dict[str, Any]:
    """How the request asks for JSON following `schema`.

    The local llama.cpp server gets the schema as an llguidance grammar asking
    for compact JSON: it ignores llguidance's whitespace option in a
    response_format, and SmolLM2 otherwise indents every line, about 40% of
    its answer's tokens.
    """
    if backend.name == "local":
        compact = {"x-guidance": {"whitespace_flexible": False}, **schema}
        return {"extra_body": {"grammar": f"%llguidance {{}}\nstart: %json {json.dumps(compact)}"}}
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "judgment", "strict": True, "schema": schema},
        }
    }


def llm_complete(
    *,
    backend: Backend,
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    max_tokens: int,
    temperature: float = 0.0,
) -> Completion:
    """One strict-JSON chat completion (at temperature 0 unless a judge samples)."""
    started = time.monotonic()
    try:
        response = backend.client.chat.completions.create(
            model=backend.model,
            messages=messages,
            temperature=temperature,
            max_tokens=max_tokens,
            **request_constraint(backend, schema),
        )
    except openai.OpenAIError as error:
        if backend.name == "local" and isinstance(error, openai.APIConnectionError):
            # The process that ran the local server may be gone; the next
            # attempt starts (or finds) one again.
            _backend.cache_clear()
        raise _error(error, backend.model) from error
    duration_ms = int((time.monotonic() - started) * 1000)
    if not response.choices:
        raise LLMError("The LLM answered without any choice.", transient=True)
    choice = response.choices[0]
    usage = response.usage
    return Completion(
        content=choice.message.content,
        refusal=getattr(choice.message, "refusal", None),
        finish_reason=choice.finish_reason or "",
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        duration_ms=duration_ms,
        cached_tokens=cached_tokens_of(usage) if usage else None,
    )
