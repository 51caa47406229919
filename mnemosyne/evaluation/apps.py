from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "mnemosyne.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation"
