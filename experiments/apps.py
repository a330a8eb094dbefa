from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "experiments"
    label = "experiments"
    verbose_name = "Experiments"
