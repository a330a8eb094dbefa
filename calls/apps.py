from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CallsConfig(AppConfig):
    name = "calls"
    verbose_name = _("Calls")
