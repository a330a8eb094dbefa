"""The local server's llama.cpp settings are checked before any model is loaded."""

from __future__ import annotations

import socket

import pytest

from qa.llm_errors import LLMError
from qa.local_model import local_server_ensure

pytest.importorskip("xllamacpp")


@pytest.mark.parametrize(
    ("setting", "value"), [("QA_LOCAL_MODEL_FLASH_ATTENTION", "fast"), ("QA_LOCAL_MODEL_KV_CACHE", "q4")]
)
def test_an_unknown_llama_cpp_setting_is_refused_by_name(settings, tmp_path, setting, value):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"not loaded")
    with socket.socket() as probe:  # a port nothing answers on, so the server would start
        probe.bind(("127.0.0.1", 0))
        settings.QA_LOCAL_MODEL_PORT = probe.getsockname()[1]
    setattr(settings, setting, value)

    with pytest.raises(LLMError, match=f"{setting} is {value!r}: set it to one of") as raised:
        local_server_ensure(model_path=str(model))
    assert not raised.value.transient
