from django.apps import AppConfig


class ExperimentsConfig(AppConfig):
    name = "reviews.experiments"
    label = "experiments"
    verbose_name = "Experiments"
