from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = _("Webhooks")

    def ready(self) -> None:
        # The outbox, below every app, learns here who wants its events and who takes them after commit.
        from outbox.services import consumer_register
        from webhooks.selectors import events_wanted
        from webhooks.services import events_dispatch

        consumer_register(name="webhooks", wanted=events_wanted, dispatch=events_dispatch)
