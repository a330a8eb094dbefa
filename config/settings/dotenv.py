"""A `.env` file beside the project, for development and tests only: production reads its
environment and nothing else (a stray `.env` on a server must not change a running system)."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def read_dotenv() -> None:
    environ.Env.read_env(BASE_DIR / ".env", overwrite=False)
