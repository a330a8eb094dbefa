from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class QaConfig(AppConfig):
    name = "qa"
    verbose_name = _("Quality assurance")

    def ready(self) -> None:
        from qa.redaction import checks  # noqa: F401 (registers the deploy check on the name models)
