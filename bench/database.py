"""Shared by the benchmarks: each uses a database of its own, made on first use."""

from __future__ import annotations

import os


def database_create() -> None:
    """Create the PostgreSQL database named by DATABASE_URL if it does not exist yet."""
    import environ
    import psycopg

    config = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    with psycopg.connect(
        host=config["HOST"], port=config["PORT"] or 5432, user=config["USER"], dbname="postgres", autocommit=True
    ) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]).fetchone():
            connection.execute(f'CREATE DATABASE "{config["NAME"]}"')
