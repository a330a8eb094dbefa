"""Publishing a task by its name: how the domain (services, judging, the executors, and the
apps above qa) hands work to a worker.

A leaf. The task modules import the domain inside their bodies; were the domain to import the
task modules back, qa would be an import circle (tests/test_layers.py forbids one). The task
published is the one Celery registered under the name, so in-process (eager) mode, and a test
that patches the task's `apply_async`, behave exactly as a call on the imported task would.
"""

from __future__ import annotations

from celery import Task, current_app


def task_get(name: str) -> Task:
    """The task registered as `name`."""
    tasks = current_app.tasks
    if name not in tasks:
        # This process has not imported the task modules yet (a web worker): Celery's
        # autodiscovery imports every app's tasks module, as a worker does when it starts.
        current_app.loader.import_default_modules()
    return tasks[name]


def task_publish(name: str, *args: object, countdown: float = 0.0) -> None:
    """Send one message for task `name`; kombu's OperationalError when the broker is down,
    so that the caller decides what stays pending for its sweep."""
    task_get(name).apply_async(args=list(args), countdown=countdown or None)


def tasks_in_process() -> bool:
    """True when a published task runs at once, in the publisher (no broker: CELERY_TASK_ALWAYS_EAGER,
    and the tests' eager mode), so nothing published can wait for later."""
    return bool(current_app.conf.task_always_eager)
