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
