"""Logging in lands each role on a page it may open, and the top bar links only to such pages."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from tests.factories import UserFactory, published_rubric

pytestmark = pytest.mark.django_db

NAV = re.compile(r"<nav aria-label=\"Main\">(.*?)</nav>", re.S)


def log_in(username: str, password: str = "pass-word-123") -> tuple[Client, object]:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    response = client.post("/accounts/login/", {"username": username, "password": password}, follow=True)
    return client, response


@pytest.mark.parametrize(
    ("username", "landing"), [("supervisor", "/dashboard/"), ("supervisor2", "/dashboard/"), ("owner", "/dashboard/")]
)
def test_the_demo_logins_land_where_the_readme_says_and_every_link_of_the_bar_opens(username, landing):
    published_rubric()  # the reports and scorecards open on a rubric
    printed = StringIO()
    call_command("create_demo_users", stdout=printed)
    passwords = dict(re.findall(r"(\w+) +password: (\S+)", printed.getvalue()))

    client, response = log_in(username, passwords[username])

    assert response.status_code == 200 and response.redirect_chain[-1][0] == landing
    links = re.findall(r'href="([^"]+)"', NAV.search(response.content.decode()).group(1))
    assert len(links) >= 4
    assert {link: client.get(link).status_code for link in links} == dict.fromkeys(links, 200)


def test_a_rubric_owner_is_not_offered_the_review_queue():
    owner = UserFactory(groups=["Rubric owners"], is_staff=True)
    client, response = log_in(owner.username)

    nav = NAV.search(response.content.decode()).group(1)
    assert "/review/" not in nav and "/reports/" in nav and "/experiments/" in nav
    assert client.get("/review/").status_code == 403  # the page itself is still closed to them


def test_staff_with_no_role_lands_on_the_admin():
    _client, response = log_in(UserFactory(is_staff=True).username)

    assert response.status_code == 200 and response.redirect_chain[-1][0] == "/admin/"


def test_an_account_with_no_role_is_refused_with_a_page_that_says_what_to_do():
    _client, response = log_in(UserFactory().username)

    assert response.status_code == 403
    page = response.content.decode()
    assert "Your account may not open this page" in page and "ask an administrator" in page
    assert '<nav aria-label="Main">' in page  # the app's own layout, not a bare "403 Forbidden"


def test_an_unknown_address_answers_the_apps_own_page_in_the_users_language(supervisor):
    client = Client(HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(supervisor)

    response = client.get("/no-such-page/")

    assert response.status_code == 404
    page = response.content.decode()
    assert "No hay nada en esta dirección." in page and 'href="/"' in page and "Resolver404" not in page


def test_the_demo_has_two_supervisors_so_a_calibration_can_run():
    from reviews.models import CalibrationSession
    from tests.factories import judged_recording

    rubric = published_rubric()
    call = judged_recording(rubric=rubric)
    lead = UserFactory(username="lead")
    from access.models import DEFAULT_WORKSPACE, Workspace
    from access.services import member_add

    member_add(user=lead, workspace=Workspace.objects.get(slug=DEFAULT_WORKSPACE), role="qa_lead")
    call_command("create_demo_users", stdout=StringIO())
    call_command(
        "calibration_create", "--rubric", rubric.slug, "--name", "Demo", "--recordings", str(call.pk),
        "--participants", "supervisor", "supervisor2", "--lead", "lead", stdout=StringIO(),
    )  # fmt: skip
    session = CalibrationSession.objects.get()
    assert sorted(session.participants.values_list("username", flat=True)) == ["supervisor", "supervisor2"]
