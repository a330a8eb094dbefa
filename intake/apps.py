from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IntakeConfig(AppConfig):
    name = "intake"
    verbose_name = _("Intake")
    default_auto_field = "django.db.models.BigAutoField"
