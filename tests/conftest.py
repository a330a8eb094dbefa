import pytest
from django.utils import translation

from tests.factories import UserFactory, published_rubric


@pytest.fixture(autouse=True)
def english_by_default():
    """Each test starts in English. A request through the test client runs LocaleMiddleware in the
    test's own thread and leaves its language active, so a Spanish page would otherwise turn the
    messages of every later test in that thread Spanish."""
    with translation.override("en"):
        yield


@pytest.fixture(autouse=True)
def rubric_caches_empty():
    """Each test starts with qa's per-process rubric caches empty. They key published rubric
    versions by primary key, which a database never reuses; the test database does, when a test
    resets its sequences, and a later test's experiment then met another test's rubric."""
    from qa import execution, judging, routing

    for cache in (execution._frozen_rubrics, execution._bound_drafts):
        cache.clear()
    judging._question.cache_clear()
    judging._question_as_created.cache_clear()
    routing.certified_thresholds_forget()  # the routing thresholds, by rubric id too
    yield


# The role groups' permissions as the migrations made them: read when the test database is set up,
# before a transactional test's flush can drop them (`role_groups` puts them back).
ROLE_GROUP_GRANTS: dict[str, list[tuple[str, str]]] = {}


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    from django.contrib.auth.models import Group

    with django_db_blocker.unblock():
        ROLE_GROUP_GRANTS.update(
            (group.name, sorted(group.permissions.values_list("content_type__app_label", "codename")))
            for group in Group.objects.all()
        )


@pytest.fixture
def role_groups(transactional_db) -> None:
    """For a transactional test that needs the role groups whole (single sign-on gives roles): an earlier
    transactional test's flush dropped the groups, and the permissions came back without them."""
    from django.contrib.auth.models import Group, Permission

    for name, grants in ROLE_GROUP_GRANTS.items():
        group, _ = Group.objects.get_or_create(name=name)
        wanted = [Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in grants]
        group.permissions.set(wanted)


@pytest.fixture
def rubric(db):
    """A published rubric with criteria c1, c2, c3 (scale 1–5)."""
    return published_rubric()


@pytest.fixture
def supervisor(db):
    return UserFactory(username="supervisor", groups=["Supervisors"])


@pytest.fixture
def rubric_owner(db):
    return UserFactory(username="owner", groups=["Rubric owners"])


# Shared by the transcription and sample tests.
from tests.judge.conftest import eager_celery, fake_llm  # noqa: E402,F401


@pytest.fixture(autouse=True)
def broker_queues_empty(request):
    """A test that starts a real Celery worker starts with its broker's queues empty. The earlier tests of
    this xdist worker (its Redis database, tests/support/parallel.py) publish tasks on commit that no worker
    took, about rows their teardown deleted; the worker would run those first, on its deadline. Emptied
    before the test, so what the test itself publishes, before or after its worker starts, stays."""
    from django.conf import settings

    if request.node.get_closest_marker("celery_worker") is not None and settings.CELERY_BROKER_URL:
        import redis

        queues = {"celery", *(route["queue"] for route in settings.CELERY_TASK_ROUTES.values())}
        try:
            client = redis.Redis.from_url(settings.CELERY_BROKER_URL, socket_timeout=2, socket_connect_timeout=2)
            # kombu's Redis transport keeps a queue as a list, and its priority levels as lists suffixed so.
            client.delete(*queues, *(f"{queue}\x06\x16{level}" for queue in queues for level in range(10)))
        except redis.RedisError:
            pass  # no broker: the test skips or fails on its own
    yield


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_newgateway(gateway) -> None:
    """Each xdist worker gets a Redis database of its own (tests/support/parallel.py)."""
    from tests.support.parallel import worker_environment_send

    worker_environment_send(gateway)
