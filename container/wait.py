"""Wait for PostgreSQL to answer (and, with --migrated, for every migration to be applied), then exit.

The container entry point runs this before each process, so a web or worker container started before
the database, or before the `migrate` container has finished, waits instead of failing. It gives up
after VEREDICTO_WAIT_SECONDS (default 300), naming what it was waiting for.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import django

# The project as the other processes import it: from /app, where manage.py runs.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--migrated", action="store_true", help="also wait until no migration is left to apply")
    args = parser.parse_args()
    django.setup()

    from django.db import DatabaseError, connection
    from django.db.migrations.executor import MigrationExecutor

    deadline = time.monotonic() + float(os.environ.get("VEREDICTO_WAIT_SECONDS", "300"))
    waiting_for = ""
    while True:
        try:
            connection.ensure_connection()
            if not args.migrated:
                return 0
            # A fresh executor each time: it reads the applied migrations from the database.
            executor = MigrationExecutor(connection)
            pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
            if not pending:
                return 0
            now, detail = "the migrations", f"{len(pending)} to apply (the migrate service applies them)"
        except DatabaseError as error:
            connection.close()
            now, detail = "the database", str(error).strip() or type(error).__name__
        if now != waiting_for:  # said once per thing waited for, not every two seconds
            print(f"Waiting for {now}: {detail}", file=sys.stderr, flush=True)
            waiting_for = now
        if time.monotonic() > deadline:
            print(f"Gave up waiting for {waiting_for}", file=sys.stderr, flush=True)
            return 1
        time.sleep(2)


if __name__ == "__main__":
    sys.exit(main())
