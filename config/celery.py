import os
from typing import Any

from celery import Celery, Task
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("veredicto")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def close_old_connections(sender: Task, **kwargs: Any) -> None:
    """Around every task, what Django does around every request: close the
    database connections that are broken or older than CONN_MAX_AGE, keep the
    others. Celery's own fixup would close them all (see CELERY_DB_REUSE_MAX),
    costing a new PostgreSQL connection, and its server process, per task."""
    if sender.request.is_eager:
        return  # in-process: the caller's connection, maybe inside its transaction
    from django.db import close_old_connections as django_close_old_connections

    django_close_old_connections()
