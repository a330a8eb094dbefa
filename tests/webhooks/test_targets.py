"""Issue 46's probe: with 127.0.0.1 allowed for one receiver, a key subscribed the judge's model server
(http://127.0.0.1:18090/v1/chat/completions) and the app's own port, and read the internal service's
reply back in GET /api/webhooks/{id}/deliveries/. An entry now allows a port only when it names it (a
bare one: the scheme's own, 443 or 80), every way of writing a URL's host is judged as the address it
is, and the log keeps a short, sanitised excerpt of an answer."""

from __future__ import annotations

import pytest

from outbox.services import events_emit
from tests.api.conftest import key_client, new_key
from tests.factories import judged_recording
from tests.support.fake_openai import FakeOpenAI
from tests.support.webhook_receiver import Answer, WebhookReceiver
from tests.webhooks.test_hosts import refused, resolving
from webhooks.models import Attempt, Delivery
from webhooks.services import RESPONSE_KEPT, subscription_create, webhook_target

PORT_REFUSED = "Port {port} of {host} is not allowed by QA_WEBHOOK_ALLOWED_HOSTS"


@pytest.mark.parametrize(
    ("allowed", "url", "host", "port"),
    [
        # The probe: the receiver's address listed bare, another service's port asked.
        (["127.0.0.1"], "http://127.0.0.1:18090/v1/chat/completions", "127.0.0.1", 18090),
        (["127.0.0.1"], "http://127.0.0.1:8000/api/recordings/", "127.0.0.1", 8000),
        (["127.0.0.1:9000"], "http://127.0.0.1:18090/", "127.0.0.1", 18090),
        (["[::1]"], "http://[::1]:18090/", "::1", 18090),
        (["[::1]:9000"], "http://[::1]:9001/", "::1", 9001),
        (["10.20.0.0/16"], "http://10.20.1.1:6379/", "10.20.1.1", 6379),
        (["127.0.0.1"], "https://127.0.0.1:80/", "127.0.0.1", 80),  # a bare entry: the scheme's own port only
        (["127.0.0.1:18090"], "http://127.0.0.1./", "127.0.0.1", 80),  # a trailing dot is the same host
        (["hooks.example.com"], "http://hooks.example.com.:18090/", "hooks.example.com", 18090),
    ],
)
def test_a_port_not_listed_is_refused(settings, allowed, url, host, port):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = allowed
    assert PORT_REFUSED.format(port=port, host=host) in refused(url)


def test_a_listed_port_and_the_schemes_own_are_allowed(settings, monkeypatch):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9000", "[::1]:9001", "10.20.0.0/16:8443", "hooks.internal:*", "hooks.example.com"]
    resolving(monkeypatch, {"hooks.internal": ["10.20.3.4"], "hooks.example.com": ["93.184.215.14"]})
    assert webhook_target("http://127.0.0.1:9000/in").port == 9000
    assert webhook_target("http://127.0.0.1.:9000/in").address == "127.0.0.1"
    assert webhook_target("http://[::1]:9001/in").address == "::1"
    assert webhook_target("https://10.20.9.9:8443/in").address == "10.20.9.9"
    # `:*` on a name: any port of it, but its addresses still need their own entry with that port.
    assert "resolves to 10.20.3.4" in refused("http://hooks.internal:7000/")
    assert webhook_target("http://hooks.internal:8443/").address == "10.20.3.4"
    assert webhook_target("https://hooks.example.com/").port == 443
    assert webhook_target("http://hooks.example.com/").port == 80
    assert PORT_REFUSED.format(port=8443, host="hooks.example.com") in refused("https://hooks.example.com:8443/")


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433:18090/",  # 127.0.0.1 as one decimal number
        "http://0177.0.0.1:18090/",  # octal
        "http://0x7f.0.0.1:18090/",  # hexadecimal
        "http://0x7f000001:18090/",
        "http://127.1:18090/",  # a short dotted form
        "http://2130706433./",
    ],
)
def test_an_address_written_as_another_number_is_refused(settings, url):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["*:*", "127.0.0.1:*"]
    assert "is a number, not a name" in refused(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://a@127.0.0.1:18090/",
        "http://a:b@127.0.0.1:9000/",
        "http://127.0.0.1:9000@evil.example.com/",
        "http://[::1]:9000@127.0.0.1:18090/",
    ],
)
def test_a_user_in_the_url_is_refused(settings, url):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9000", "[::1]:9000"]
    assert refused(url) == "The URL may not carry a user or password."


def test_ipv6_forms_are_judged_as_the_address_they_are(settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:9000"]
    # ::ffff:127.0.0.1 is 127.0.0.1: its port is the one that counts.
    assert webhook_target("http://[::ffff:127.0.0.1]:9000/").address == "127.0.0.1"
    assert PORT_REFUSED.format(port=18090, host="::ffff:127.0.0.1") in refused("http://[::ffff:127.0.0.1]:18090/")
    assert refused("http://[::1]:9000/") == "The address ::1 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS."


def test_a_bad_entry_is_named(settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:http"]
    assert "'127.0.0.1:http'" in refused("http://127.0.0.1/")


@pytest.mark.django_db
def test_the_probe_a_key_cannot_subscribe_the_judge_server_nor_read_its_answer(settings):
    """The probe end to end: the receiver's port listed; the model server on another port of the same
    address is refused when subscribing; and where an operator lists it, the log shows only an excerpt."""
    with FakeOpenAI() as judge_server, WebhookReceiver() as receiver:
        judge_port = int(judge_server.base_url.split(":")[2].split("/")[0])
        settings.QA_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{receiver.port}"]
        client = key_client(new_key("probe", all_sources=True)[1])
        for url in (f"http://127.0.0.1:{judge_port}/v1/chat/completions", f"http://a@127.0.0.1:{judge_port}/",
                    f"http://2130706433:{judge_port}/", f"http://[::ffff:127.0.0.1]:{judge_port}/"):
            answer = client.post("/api/webhooks/", {"url": url, "events": ["recording.judged"]}, format="json")
            assert answer.status_code == 400 and "url" in answer.json(), url
        assert judge_server.requests == []


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_celery")
def test_the_delivery_log_keeps_a_short_sanitised_excerpt(receiver, django_capture_on_commit_callbacks):
    subscription, _secret = subscription_create(url=receiver.url, events=["recording.judged"])
    secret_reply = '{"choices": [{"message": {"content": "INTERNAL-' + "x" * 3000 + '"}}]}'
    receiver.script(Answer(500, body="line one\r\nFORGED: admin\x1b[31m\u202e" + secret_reply))
    recording = judged_recording()
    with django_capture_on_commit_callbacks(execute=True):
        events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk, recording_id=recording.pk)
    [attempt] = Attempt.objects.all()
    assert attempt.response_code == 500
    assert len(attempt.response_body) <= RESPONSE_KEPT and attempt.response_body.endswith("…")
    assert attempt.response_body.startswith("line one FORGED: admin [31m")
    assert not any(char in attempt.response_body for char in "\r\n\x1b\u202e")
    # Over the API, the same excerpt and nothing more.
    api_key, key = new_key("crm", all_sources=True)
    subscription.api_key = api_key
    subscription.save(update_fields=["api_key"])
    body = key_client(key).get(f"/api/webhooks/{subscription.pk}/deliveries/").content.decode()
    assert "x" * RESPONSE_KEPT not in body and "line one FORGED" in body


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_celery")
def test_a_redirect_to_an_internal_service_is_not_followed(receiver, django_capture_on_commit_callbacks):
    with FakeOpenAI() as judge_server:
        subscription_create(url=receiver.url, events=["recording.judged"])
        receiver.script(Answer(307, headers={"Location": f"{judge_server.base_url}/chat/completions"}))
        recording = judged_recording()
        with django_capture_on_commit_callbacks(execute=True):
            events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk, recording_id=recording.pk)
        assert judge_server.requests == []
    assert list(Attempt.objects.values_list("outcome", "response_code")) == [("retry", 307)]
    assert Delivery.objects.get().status == Delivery.Status.PENDING
