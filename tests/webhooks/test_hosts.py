"""QA_WEBHOOK_ALLOWED_HOSTS: a webhook reaches only listed hosts, and never a loopback, private or other
internal address unless that address is listed, whatever a listed name resolves to."""

from __future__ import annotations

import socket
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from core.errors import InvalidInputError
from core.hosts import HostNotAllowed
from tests.api.conftest import key_client, new_key
from webhooks.models import Subscription
from webhooks.services import subscription_create, webhook_target


def refused(url: str) -> str:
    with pytest.raises(HostNotAllowed) as error:
        webhook_target(url)
    return str(error.value)


def resolving(monkeypatch, answers: dict[str, list[str]]) -> None:
    """The DNS answers a name gets (an attacker's zone can answer anything)."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_nothing_is_allowed_by_default(settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = []
    assert refused("https://hooks.example.com/x") == "QA_WEBHOOK_ALLOWED_HOSTS lists no host, so none may be reached."


def test_only_listed_hosts(settings, monkeypatch):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com", ".crm.example.net"]
    resolving(monkeypatch, {"hooks.example.com": ["93.184.215.14"], "eu.crm.example.net": ["93.184.215.15"]})
    assert webhook_target("https://hooks.example.com/in?x=1").address == "93.184.215.14"
    assert webhook_target("https://hooks.example.com/in?x=1").path == "/in?x=1"
    assert webhook_target("https://eu.crm.example.net/").address == "93.184.215.15"
    assert refused("https://evil.example.com/") == "The host evil.example.com is not allowed by QA_WEBHOOK_ALLOWED_HOSTS."
    assert refused("https://8.8.8.8/") == "The address 8.8.8.8 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS."


def test_a_listed_name_resolving_inside_the_network_is_refused(settings, monkeypatch):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["*"]
    resolving(monkeypatch, {"hooks.example.com": ["93.184.215.14", "10.0.0.5"], "meta.example.com": ["169.254.169.254"]})
    assert "resolves to 10.0.0.5, a loopback, private or other non-public address" in refused("https://hooks.example.com/")
    assert "resolves to 169.254.169.254" in refused("http://meta.example.com/")
    # Real resolution, no DNS trick: localhost is loopback.
    assert "resolves to" in refused("http://localhost/")
    for literal in ("http://127.0.0.1/", "http://10.1.2.3/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/"):
        assert "is not allowed by QA_WEBHOOK_ALLOWED_HOSTS" in refused(literal), literal
    assert webhook_target("http://8.8.8.8/hook").address == "8.8.8.8"  # a public address, with `*`


def test_an_internal_host_is_reached_when_its_addresses_are_listed(settings, monkeypatch):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.internal", "10.20.0.0/16"]
    resolving(monkeypatch, {"hooks.internal": ["10.20.3.4"], "other.internal": ["10.30.0.1"]})
    assert webhook_target("http://hooks.internal/in").address == "10.20.3.4"
    assert webhook_target("http://10.20.9.9/in").address == "10.20.9.9"
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.internal", "other.internal", "10.20.0.0/16"]
    assert "resolves to 10.30.0.1" in refused("http://other.internal/")


def test_bad_urls(settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["*", "127.0.0.1"]
    assert refused("ftp://127.0.0.1/x").startswith("The URL must be http:// or https://")
    assert refused("http:///nohost").startswith("The URL must be http:// or https://")
    assert refused("http://user:pass@127.0.0.1/") == "The URL may not carry a user or password."
    assert "is not a valid URL" in refused("http://127.0.0.1:99999/")


@pytest.mark.django_db
def test_a_forbidden_host_is_refused_when_subscribing(settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    with pytest.raises(InvalidInputError) as error:
        subscription_create(url="http://169.254.169.254/latest/meta-data", events=["recording.judged", "nope"])
    assert error.value.errors == {
        "url": "The address 169.254.169.254 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS.",
        "events": "Unknown event 'nope'; use: recording.judged, recording.failed, recording.routed, review.created, "
        "dispute.opened, dispute.resolved, experiment.finished, coaching.created, coaching.acknowledged.",
    }
    # Over the API: a 400 naming the field, nothing stored.
    _api_key, key = new_key("crm")
    response = key_client(key).post(
        "/api/webhooks/", {"url": "http://127.0.0.1:8000/hook", "events": ["recording.judged"]}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"url": "The address 127.0.0.1 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS."}
    # From the command line: an error naming it.
    with pytest.raises(CommandError, match="url: The address 10.0.0.1 is not allowed"):
        call_command("create_webhook", "http://10.0.0.1/", "--events", "recording.judged", stdout=StringIO())
    assert Subscription.objects.count() == 0


@pytest.mark.django_db
def test_the_refusals_reach_the_admin_in_either_language(settings, client):
    """The admin's form shows core.hosts' refusals, naming the host and the setting, in Spanish too."""
    from access.models import DEFAULT_WORKSPACE, Workspace
    from tests.factories import UserFactory

    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    form = {"workspace": Workspace.objects.get(slug=DEFAULT_WORKSPACE).pk, "events": ["recording.judged"]}
    for language, url, message in [
        ("en", "http://10.0.0.1/", "The address 10.0.0.1 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS."),
        ("es", "http://10.0.0.1/", "La dirección 10.0.0.1 no está permitida por QA_WEBHOOK_ALLOWED_HOSTS."),
        ("es", "http://127.0.0.1:8000/", "QA_WEBHOOK_ALLOWED_HOSTS no permite el puerto 8000 de 127.0.0.1"),
        ("es", "http://u:p@127.0.0.1/", "La URL no puede llevar usuario ni contraseña."),
    ]:
        page = client.post("/admin/webhooks/subscription/add/", {**form, "url": url}, HTTP_ACCEPT_LANGUAGE=language)
        assert message in page.content.decode(), (language, url)
    settings.QA_WEBHOOK_ALLOWED_HOSTS = []
    page = client.post("/admin/webhooks/subscription/add/", {**form, "url": "https://hooks.example.com/"},
                       HTTP_ACCEPT_LANGUAGE="es")  # fmt: skip
    assert "QA_WEBHOOK_ALLOWED_HOSTS no lista ningún host, así que no se puede llegar a ninguno." in page.content.decode()
    assert Subscription.objects.count() == 0
