from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = _("Webhooks")

    def ready(self) -> None:
        # The outbox, below every app, learns here who wants its events and who takes them after commit.
        from core.jobs import job_kind_register
        from outbox.services import consumer_register
        from webhooks.selectors import events_wanted
        from webhooks.services import DELIVERIES, events_dispatch

        consumer_register(name="webhooks", wanted=events_wanted, dispatch=events_dispatch)
        # Deliveries are a kind of the job executor: its one sweep takes back and sends what lost its message.
        job_kind_register(DELIVERIES)
