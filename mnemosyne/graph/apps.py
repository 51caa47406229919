from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "mnemosyne.graph"
    label = "graph"
    verbose_name = "Concept graph"
