#!/bin/sh
# The image's entry point: a role name runs that process, the way docs/operations/running.md
# starts it; anything else (manage.py create_api_key crm, a shell) runs as given.
# Every role first waits for PostgreSQL, and all but `migrate` for the migrations to be applied, so
# the start order of the containers does not matter (a compose tool that ignores depends_on
# conditions, a Kubernetes deployment, a restarted worker).
set -eu
cd /app

case "${1:-web}" in
    web)
        python container/wait.py --migrated
        exec gunicorn config.wsgi --bind 0.0.0.0:8000 --workers "${WEB_CONCURRENCY:-3}" --access-logfile -
        ;;
    worker)
        python container/wait.py --migrated
        exec celery -A config worker --pool threads --concurrency "${WORKER_CONCURRENCY:-10}" \
            --loglevel "${LOG_LEVEL:-INFO}"
        ;;
    transcription-worker)
        python container/wait.py --migrated
        exec celery -A config worker -Q transcription --concurrency "${TRANSCRIPTION_CONCURRENCY:-1}" \
            --loglevel "${LOG_LEVEL:-INFO}"
        ;;
    beat)
        python container/wait.py --migrated
        # The schedule's state is only the last run of each entry: /tmp is enough (the user cannot write /app).
        exec celery -A config beat --schedule /tmp/celerybeat-schedule --loglevel "${LOG_LEVEL:-INFO}"
        ;;
    migrate)
        python container/wait.py
        exec python manage.py migrate --noinput
        ;;
    manage.py)
        shift
        exec python manage.py "$@"
        ;;
    *)
        exec "$@"
        ;;
esac
