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


# The generators' judgments, after their recordings: one succeeded run for each recording, made its current
# run. Each generator then inserts its scores as `SCORES_INSERT` followed by its own SELECT over qa_judgerun
# (the run's id and created_at, the partition key, then the values, confidences and quotes it wants, in these
# columns' order).
JUDGE_RUN_STEPS = [
    (
        "runs",
        """
        INSERT INTO qa_judgerun (recording_id, rubric_id, backend, model, prompt_version, status, attempts,
            created_at, started_at, finished_at, llm_duration_ms, prompt_tokens, completion_tokens, raw_output, error)
        SELECT id, rubric_id, 'openai', 'gpt-4.1-mini', 'judge-v3', 'succeeded', 1,
            created_at, created_at, created_at + interval '9 seconds', 9000, 6200, 900, '', ''
        FROM qa_recording
        """,
    ),
    ("current runs", "UPDATE qa_recording r SET current_run_id = j.id FROM qa_judgerun j WHERE j.recording_id = r.id"),
]
SCORES_INSERT = """
    INSERT INTO qa_score (run_id, run_created_at, criterion_id, value, confidence, model_confidence, evidence,
        evidence_verified, verification_status, verification_spans, verification_closest,
        verifier_version, rationale)
"""


def run_steps(steps: list[tuple[str, str]], parameters: dict, *, width: int) -> None:
    """Each (name, SQL) of `steps` with `parameters`, one transaction each (the connection autocommits, and
    VACUUM needs none), printing its rows and time, the name right-aligned in `width` characters."""
    import time

    from django.db import connection

    for name, sql in steps:
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(sql, parameters)
            rows = cursor.rowcount
        print(f"{name:>{width}}: {rows:>9,} rows in {time.perf_counter() - started:6.1f} s", flush=True)
