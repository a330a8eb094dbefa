"""Say clearly which service the tests cannot reach, instead of failing in the middle of the suite."""

import os
import sys
from urllib.parse import urlsplit

import psycopg
import redis


def main() -> int:
    problems = []
    database_url = os.environ["DATABASE_URL"]
    try:
        # The server's maintenance database: the test database is created by the tests themselves.
        parts = urlsplit(database_url)
        psycopg.connect(parts._replace(path="/postgres").geturl(), connect_timeout=5).close()
    except psycopg.Error as error:
        problems.append(f"PostgreSQL is not reachable at {database_url}: {error}".strip())
    broker_url = os.environ["CELERY_BROKER_URL"]
    try:
        redis.Redis.from_url(broker_url, socket_connect_timeout=5).ping()
    except redis.RedisError as error:
        problems.append(f"Redis is not reachable at {broker_url}: {error}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
