"""Single sign-on over real HTTP, as its page says: Veredicto's live server, a real OpenID Connect provider
(django-oidc-provider, tests/support/oidc_idp) in a second process on loopback, and a person's browser played
by a `requests` session that follows the redirects and posts the provider's login form.

Veredicto is configured as the single sign-on page tells an operator: its variables, with the
values the provider's discovery document gives, read by the settings module in a process of their own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import jwt
import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.exceptions import SuspiciousOperation

from access.models import Membership, SsoIdentity
from access.services import member_add, workspace_create
from access.sso import SsoBackend
from tests.factories import UserFactory
from tests.review.test_browser import browser  # noqa: F401  (the headless Chromium fixture)
from tests.support.docs import docs_section
from tests.support.oidc_provider import IdentityProvider

# The groups' permissions come from migrations; a flush by an earlier transactional test drops them, so
# each test puts them back (`role_groups`) rather than restoring a serialized database, which collides
# with the content types that flush recreates.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("role_groups")]
ROOT = Path(__file__).resolve().parent.parent
CLIENT_ID, CLIENT_SECRET = "veredicto", "a-client-secret-the-provider-issued"
PASSWORD = "the provider checks this one"


def readme_sso_variables() -> dict[str, str]:
    """The variables of the single sign-on page's block (NAME=value lines of its first shell block)."""
    section = docs_section("docs/operations/sso.md", "Single sign-on")
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return dict(line.split("=", 1) for line in block.splitlines() if re.match(r"^[A-Z_]+=", line))


@pytest.fixture(scope="session")
def identity_provider(tmp_path_factory):
    provider = IdentityProvider(tmp_path_factory.mktemp("idp")).start()
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def sso_settings(identity_provider, live_server) -> dict:
    """Veredicto's settings for the provider: the single sign-on page's variables, each filled from the provider's
    discovery document or with the client registered there, read by config.settings in a new process."""
    discovery = identity_provider.discovery()
    identity_provider.register_client(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=f"{live_server.url}/oidc/callback/"
    )
    values = {
        "OIDC_RP_CLIENT_ID": CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
        "OIDC_OP_ISSUER": discovery["issuer"],
        "OIDC_OP_AUTHORIZATION_ENDPOINT": discovery["authorization_endpoint"],
        "OIDC_OP_TOKEN_ENDPOINT": discovery["token_endpoint"],
        "OIDC_OP_USER_ENDPOINT": discovery["userinfo_endpoint"],
        "OIDC_OP_JWKS_ENDPOINT": discovery["jwks_uri"],
        # This provider gives Veredicto's claims for a scope of their own (the page: ask for it so).
        "OIDC_RP_SCOPES": "openid email profile veredicto",
        "QA_OIDC_PROVIDER_NAME": "Test IdP",
        "QA_OIDC_TEAMS_CLAIM": "veredicto_teams",
    }
    assert set(values) == set(readme_sso_variables())  # every variable the page shows, and no other
    script = (
        "import json, config.settings.test as s; print(json.dumps({k: getattr(s, k) for k in dir(s) if "
        "k.startswith(('OIDC_', 'QA_OIDC_', 'QA_SSO', 'AXES_WHITELIST')) or k == 'AUTHENTICATION_BACKENDS'}))"
    )
    read = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **values}, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(read.stdout)


@pytest.fixture
def sso(settings, sso_settings, identity_provider, live_server):
    for name, value in sso_settings.items():
        setattr(settings, name, value)
    assert settings.QA_SSO and settings.OIDC_RP_SIGN_ALGO == "RS256"
    return identity_provider


@pytest.fixture
def acme(db):
    return workspace_create(slug="acme", name="ACME")


class Browser:
    """A person's browser: one cookie jar for both sites, redirects followed."""

    def __init__(self, base: str, language: str = "en") -> None:
        self.base, self.session = base, requests.Session()
        self.session.headers["Accept-Language"] = language

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.session.get(urljoin(self.base, path), timeout=30, **kwargs)

    def status(self, path: str) -> int:
        """A page's own answer, not followed: a login page after a redirect is no 200 for the page."""
        return self.get(path, allow_redirects=False).status_code

    def sso_login(self, username: str, *, next_path: str = "") -> requests.Response:
        """From Veredicto's login page: its button, the provider's form, back through the callback."""
        login_page = self.get("/accounts/login/" + (f"?next={next_path}" if next_path else ""))
        button = re.search(r'<a class="button" href="([^"]+)">(Sign in with|Entrar con) Test IdP</a>', login_page.text)
        provider_form = self.get(unescape(button.group(1)))
        assert urlsplit(provider_form.url).port != urlsplit(self.base).port, "expected the provider's login page"
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', provider_form.text).group(1)
        posted_next = re.search(r'name="next" value="([^"]*)"', provider_form.text).group(1)
        return self.session.post(
            provider_form.url,
            data={"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD, "next": unescape(posted_next)},
            timeout=30,
        )


def test_a_new_person_signs_in_with_the_role_their_claims_give_and_it_follows_the_provider(sso, acme, live_server):
    sso.set_user("ana", password=PASSWORD, email="ana@example.com", first_name="Ana", last_name="Ruiz",
                 groups=("workspace:acme", "role:supervisor", "team:North"))  # fmt: skip
    browser = Browser(live_server.url)
    landed = browser.sso_login("ana")
    assert landed.status_code == 200 and urlsplit(landed.url).netloc == urlsplit(live_server.url).netloc

    user = get_user_model().objects.get(sso_identities__subject__isnull=False)
    assert (user.username, user.email, user.get_full_name()) == ("ana", "ana@example.com", "Ana Ruiz")
    assert SsoIdentity.objects.get(user=user).issuer == sso.issuer
    membership = Membership.objects.get(user=user)
    assert (membership.workspace, membership.role) == (acme, "supervisor")
    assert list(membership.teams.values_list("name", flat=True)) == ["North"]
    assert not user.has_usable_password()  # they sign in at the provider only
    # What the role may open, and what it may not.
    assert browser.status("/review/") == 200
    assert browser.status("/calibrations/new/") == 403

    # The provider makes her a QA lead: at her next login she is one here too, and no second user appears.
    sso.set_user("ana", password=PASSWORD, email="ana@example.com", groups=("workspace:acme", "role:qa_lead"))
    browser = Browser(live_server.url)
    browser.sso_login("ana")
    assert Membership.objects.get(user=user).role == "qa_lead"
    assert get_user_model().objects.count() == 1
    assert browser.status("/calibrations/new/") == 200

    # Then a rubric owner: the review queue, a supervisor's, closes to her.
    sso.set_user("ana", password=PASSWORD, email="ana@example.com", groups=("workspace:acme", "role:rubric_owner"))
    browser = Browser(live_server.url)
    browser.sso_login("ana")
    assert Membership.objects.get(user=user).role == "rubric_owner"
    assert browser.status("/review/") == 403


def test_teams_follow_the_teams_claim_where_one_is_named_and_are_veredictos_where_not(sso, acme, live_server, settings):
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor", "team:North", "team:East"))
    Browser(live_server.url).sso_login("ana")
    membership = Membership.objects.get(user__username="ana")
    assert sorted(membership.teams.values_list("name", flat=True)) == ["East", "North"]

    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor", "team:North"))
    Browser(live_server.url).sso_login("ana")
    assert list(membership.teams.values_list("name", flat=True)) == ["North"]

    # Without QA_OIDC_TEAMS_CLAIM, an administrator gives the teams in Veredicto, and a login keeps them.
    settings.QA_OIDC_TEAMS_CLAIM = ""
    member_add(user=membership.user, workspace=acme, role="supervisor", teams=["South"])
    Browser(live_server.url).sso_login("ana")
    assert list(membership.teams.values_list("name", flat=True)) == ["South"]


def test_a_role_sent_as_a_list_of_one_is_that_role(sso, acme, live_server):
    sso.set_user("dora", password=PASSWORD, groups=("claims:role_list", "workspace:acme", "role:supervisor"))
    Browser(live_server.url).sso_login("dora")
    assert Membership.objects.get(user__username="dora").role == "supervisor"


def test_the_claims_may_come_in_the_id_token_alone(sso, acme, live_server):
    """The provider sends this person's workspace and role in the ID token and not in the userinfo answer."""
    sso.set_user("carla", password=PASSWORD, groups=("claims:id_token", "workspace:acme", "role:qa_lead"))
    browser = Browser(live_server.url)
    browser.sso_login("carla")
    assert Membership.objects.get(user__username="carla").role == "qa_lead"
    assert browser.status("/calibrations/new/") == 200


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (("workspace:acme", "role:superhero"), "gave the role “superhero” (the claim veredicto_role); Veredicto knows"),
        (("workspace:elsewhere", "role:supervisor"), "gave the workspace “elsewhere” (the claim veredicto_workspace)"),
        (("workspace:acme",), "did not say your role (the claim veredicto_role)"),
        (("workspace:acme", "role:agent"), "gave the role agent but not your agent id"),
        (("claims:role_list", "workspace:acme", "role:qa_lead", "role:supervisor"),
         "gave several values in the claim veredicto_role (qa_lead, supervisor); Veredicto takes one."),
    ],
)
def test_a_login_whose_claims_are_unknown_is_refused_with_a_message_and_creates_no_one(sso, acme, live_server, groups, message):
    sso.set_user("bea", password=PASSWORD, email="bea@example.com", groups=groups)
    browser = Browser(live_server.url)
    landed = browser.sso_login("bea")
    assert landed.url == f"{live_server.url}/accounts/login/"
    assert message in unescape(landed.text)
    assert not get_user_model().objects.exists()
    assert browser.status("/review/") == 302  # to the login page: not signed in


def test_a_person_deactivated_in_veredicto_stays_out_whatever_the_provider_says(sso, acme, live_server):
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    signed_in = Browser(live_server.url)
    signed_in.sso_login("ana")
    assert signed_in.status("/review/") == 200
    user = get_user_model().objects.get(username="ana")
    user.is_active = False
    user.save()
    assert signed_in.status("/review/") == 302  # the session they had ends with it
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:admin"))
    browser = Browser(live_server.url)
    landed = browser.sso_login("ana")
    assert "Your Veredicto account is deactivated" in landed.text
    assert browser.status("/review/") == 302
    assert Membership.objects.get(user=user).role == "supervisor"  # nothing synced


def test_a_refusal_is_said_in_the_persons_language(sso, acme, live_server):
    sso.set_user("bea", password=PASSWORD, groups=("workspace:acme", "role:superhero"))
    landed = Browser(live_server.url, language="es").sso_login("bea")
    assert "Su proveedor de identidad dio el rol «superhero» (el claim veredicto_role)" in unescape(landed.text)
    assert "Entrar con Test IdP" in landed.text


def test_the_provider_is_linked_by_subject_never_by_a_local_accounts_name_or_address(sso, acme, live_server):
    """A local password account called "ana" with her address stays hers: the provider's "ana" is another user."""
    local = UserFactory(username="ana", email="ana@example.com", password="local password", groups=["QA leads"])
    member_add(user=local, workspace=acme, role="qa_lead")
    sso.set_user("ana", password=PASSWORD, email="ana@example.com", groups=("workspace:acme", "role:supervisor"))
    Browser(live_server.url).sso_login("ana")
    newcomer = get_user_model().objects.get(sso_identities__issuer=sso.issuer)
    assert newcomer != local and newcomer.username == "ana-2"
    assert Membership.objects.get(user=local, workspace=acme).role == "qa_lead"


def test_after_login_only_a_path_on_this_site_is_followed(sso, acme, live_server):
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    kept = Browser(live_server.url).sso_login("ana", next_path="/calibrations/")
    assert kept.url == f"{live_server.url}/calibrations/"
    away = Browser(live_server.url).sso_login("ana", next_path="https://evil.example/phish")
    assert urlsplit(away.url).netloc == urlsplit(live_server.url).netloc


def test_refused_logins_lock_no_one_out(sso, acme, live_server, settings):
    """django-axes counts failed logins by username and address; the callback's refusals are not password
    guesses (those are typed at the provider), so more of them than the limit leave the next person in."""
    sso.set_user("bea", password=PASSWORD, groups=("workspace:acme", "role:superhero"))
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        Browser(live_server.url).sso_login("bea")
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    browser = Browser(live_server.url)
    browser.sso_login("ana")
    assert browser.status("/review/") == 200


def test_the_password_login_stays_beside_the_button(sso, live_server):
    page = Browser(live_server.url).get("/accounts/login/")
    assert "Sign in with Test IdP" in page.text and 'name="password"' in page.text


def test_without_sso_settings_there_is_no_button_and_its_pages_answer_404(client, settings):
    settings.QA_SSO = False
    assert "Sign in with" not in client.get("/accounts/login/").content.decode()
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404


def test_some_sso_settings_but_not_all_is_an_error_naming_the_missing_ones():
    env = {**os.environ, "OIDC_RP_CLIENT_ID": "veredicto"}
    read = subprocess.run([sys.executable, "-c", "import config.settings.test"], env=env, cwd=ROOT, capture_output=True, text=True)
    assert read.returncode != 0
    assert "missing: OIDC_RP_CLIENT_SECRET, OIDC_OP_ISSUER" in read.stderr


def test_the_request_to_the_provider_carries_state_nonce_and_a_pkce_challenge(sso, live_server):
    to_provider = Browser(live_server.url).get("/oidc/authenticate/", allow_redirects=False)
    assert to_provider.status_code == 302
    query = parse_qs(urlsplit(to_provider.headers["Location"]).query)
    assert query["response_type"] == ["code"] and query["client_id"] == [CLIENT_ID]
    assert query["code_challenge_method"] == ["S256"] and len(query["state"][0]) >= 32 and query["nonce"]


def test_an_id_token_signed_with_the_shared_secret_is_refused(sso, acme, live_server):
    """HS256 would let anyone holding the client secret mint tokens: only the provider's own key (RS256) signs."""
    callback = f"{live_server.url}/oidc/callback/"
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    sso.register_client(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=callback, jwt_alg="HS256")
    try:
        landed = Browser(live_server.url).sso_login("ana")
    finally:
        sso.register_client(client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=callback)
    assert landed.status_code == 400 and urlsplit(landed.url).path == "/oidc/callback/"
    assert not get_user_model().objects.exists()


def test_an_id_token_from_another_issuer_is_refused(sso, acme, live_server, settings):
    settings.OIDC_OP_ISSUER = "https://sso.example.com/realms/acme"  # not the provider that signed it
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    landed = Browser(live_server.url).sso_login("ana")
    assert landed.status_code == 400
    assert not get_user_model().objects.exists()


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_in_a_browser_the_button_is_reached_by_keyboard_and_signs_in(sso, acme, live_server, browser, width):
    """Headless Chromium, keyboard only: Tab to the button, Enter, the provider's form, back signed in. The
    login page fits the width and axe-core finds nothing wrong on it."""
    from tests.review.test_browser import accessibility_violations

    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    page = browser.new_page(locale="es-ES", viewport={"width": width, "height": 844})
    page.goto(f"{live_server.url}/accounts/login/?next=/review/")
    assert accessibility_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for _ in range(15):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Entrar con Test IdP":
            break
    else:
        pytest.fail("Tab never reached the single sign-on button")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{sso.site_url}/login/**")
    page.fill("input[name=username]", "ana")  # the provider's page, not Veredicto's
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/review/")
    assert Membership.objects.get(user__sso_identities__issuer=sso.issuer).role == "supervisor"


def test_an_id_token_the_provider_signed_for_another_client_is_refused(sso, acme, live_server, settings):
    """A real ID token, signed by the provider's key for another of its clients (as another application at
    the same provider would hold), presented to Veredicto's backend: its audience is not Veredicto."""
    callback = f"{live_server.url}/oidc/callback/"
    sso.register_client(client_id="other-app", client_secret="other-secret", redirect_uri=callback)
    sso.set_user("ana", password=PASSWORD, groups=("workspace:acme", "role:supervisor"))
    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = "other-app", "other-secret"
    settings.OIDC_STORE_ID_TOKEN = True  # keeps the token in the session, where the test reads it
    browser = Browser(live_server.url)
    browser.sso_login("ana")
    token = SessionStore(browser.session.cookies["sessionid"]).get("oidc_id_token")
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == "other-app"

    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = CLIENT_ID, CLIENT_SECRET
    nonce = jwt.decode(token, options={"verify_signature": False})["nonce"]
    with pytest.raises(SuspiciousOperation, match="for another client"):
        SsoBackend().verify_token(token, nonce=nonce)
