from django.contrib import admin

from mnemosyne.evaluation.models import EvaluationSet, Run


@admin.register(EvaluationSet)
class EvaluationSetAdmin(admin.ModelAdmin):
    list_display = ("name", "library", "created_at")
    search_fields = ("name",)
    readonly_fields = ("uid",)


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("uid", "evaluation_set", "label", "status", "done", "total", "created_at")
    list_filter = ("status",)
    readonly_fields = ("uid", "configuration", "measures", "done", "total", "started_at", "finished_at")
