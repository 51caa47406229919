"""The console's addresses, under /console/ (mnemosyne/project/urls.py)."""

from django.urls import path

from console import (
    activity,
    browse,
    changes,
    citations,
    evaluation_runs,
    evaluation_sets,
    ingestion_watch,
    playground,
    profiles,
    sign_in,
    tokens,
    uploads,
)

app_name = "console"

urlpatterns = [
    path("", browse.libraries, name="libraries"),
    path("sign-in/", sign_in.SignIn.as_view(), name="sign-in"),
    path("sign-out/", sign_in.SignOut.as_view(), name="sign-out"),
    path("libraries/<str:uid>/", browse.library, name="library"),
    path("libraries/<str:uid>/profile", profiles.set_profile, name="set-profile"),
    path("libraries/<str:uid>/synonyms", profiles.save_set, name="save-synonyms"),
    path("libraries/<str:uid>/synonyms/<str:name>/delete", profiles.delete_set, name="delete-synonyms"),
    path("libraries/<str:uid>/synonyms/<str:name>.txt", profiles.export_set, name="export-synonyms"),
    path("collections/<str:uid>/", browse.collection, name="collection"),
    path("items/<str:uid>/", browse.item, name="item"),
    path("items/<str:uid>/original", citations.download, name="download"),
    path("items/<str:uid>/text", browse.item_text, name="item-text"),
    path("items/<str:uid>/pages/<int:number>.png", citations.page_image, name="page-image"),
    path("chunks/<str:uid>", citations.chunk, name="chunk"),
    path("items/<str:uid>/delete", changes.delete_item, name="delete-item"),
    path("collections/<str:uid>/retry-failed", changes.retry_failed, name="retry-failed"),
    path("collections/<str:uid>/uploads", uploads.upload, name="upload"),
    path("collections/<str:uid>/jobs", uploads.jobs, name="jobs"),
    path("sources/<str:uid>/sync", changes.sync_now, name="sync-now"),
    path("collections/<str:uid>/sources", changes.add_source, name="add-source"),
    path("ingestion/", ingestion_watch.ingestion, name="ingestion"),
    path("playground/", playground.playground, name="playground"),
    path("activity/", activity.activity, name="activity"),
    path("evaluation/", evaluation_sets.sets, name="evaluation-sets"),
    path("evaluation/answers", evaluation_sets.answers, name="evaluation-answers"),
    path("evaluation/<str:uid>/", evaluation_sets.evaluation_set, name="evaluation-set"),
    path("evaluation/<str:uid>/import", evaluation_sets.import_questions, name="evaluation-import"),
    path("evaluation/<str:uid>/runs", evaluation_sets.start_run, name="evaluation-start"),
    path("evaluation/<str:uid>/compare", evaluation_runs.comparison, name="evaluation-compare"),
    path("runs/<str:uid>/", evaluation_runs.run, name="evaluation-run"),
    path("runs/<str:uid>/cancel", evaluation_runs.cancel, name="evaluation-cancel"),
    path("runs/<str:uid>/resume", evaluation_runs.resume, name="evaluation-resume"),
    path("runs/<str:uid>/answers.csv", evaluation_runs.export, name="evaluation-export"),
    path("tokens/", tokens.tokens, name="tokens"),
    path("tokens/<int:token_id>/revoke", tokens.revoke, name="revoke-token"),
    path("applications/<int:grant_id>/revoke", tokens.revoke_grant, name="revoke-grant"),
]
