"""Every page names its icon, and the icon is served: without one a browser asks each page for
/favicon.ico, which does not exist, and the server logs a 404 for every page view."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

from tests.factories import UserFactory

ICON = re.compile(r'<link rel="icon" href="([^"]+)"')


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/", "/admin/"])
def test_the_page_names_an_icon_that_exists(client, path):
    client.force_login(UserFactory(username="staff", is_staff=True, is_superuser=True))
    page = client.get(path, follow=True)
    assert page.status_code == 200
    (href,) = ICON.findall(page.content.decode())
    assert href.endswith("/favicon.svg")
    assert finders.find(href.rpartition("/static/")[2]) is not None
