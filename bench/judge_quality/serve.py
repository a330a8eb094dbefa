"""Serve a local model on loopback for the judge-quality runner, until stopped:

    nice -n 10 python -m bench.judge_quality.serve [--model qwen2.5-coder-1.5b] [--port 18790] [--threads N]

The model is started exactly as the product starts its local judge (qa.local_model: the bundled
SmolLM2-135M, or a model QA_LOCAL_MODEL names, assembled and checked by hash), in this process, so
`nice` covers it; the runner is then pointed at http://127.0.0.1:PORT/v1 with the model name printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="", help="QA_LOCAL_MODEL's value; blank: the bundled SmolLM2-135M")
    parser.add_argument("--port", type=int, default=18790, help="the loopback port")
    parser.add_argument("--threads", type=int, default=0, help="QA_LOCAL_MODEL_THREADS (0: llama.cpp decides)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.test import override_settings

    from qa.local_model import local_server_ensure

    with override_settings(QA_LOCAL_MODEL_PORT=args.port, QA_LOCAL_MODEL_THREADS=args.threads):
        server = local_server_ensure(model_name=args.model)
    print(f"serving --base-url {server.base_url}/v1 --model {server.model}", flush=True)
    while True:  # the server lives as long as this process
        time.sleep(3600)


if __name__ == "__main__":
    main()
