"""reembed_library: a library's chunks embedded again with the servers' own model, in the
background — for a library still on another model (embedded before the servers moved to a new
`EMBEDDING_MODEL`), whose vector searches are refused until then. A library's managers' act."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from access.principal import Principal
from mcp_server.tools.schemas import LibraryRef
from mcp_server.tools.spec import DESTRUCTIVE_IDEMPOTENT_WRITE, Arguments, ToolSpec
from mnemosyne.embedding import get_embedder
from mnemosyne.ingestion import tasks
from mnemosyne.library import selectors
from mnemosyne.library.errors import InvalidArgument
from mnemosyne.library.models import Library, ReembedJob

UNDER_WAY = (ReembedJob.Status.QUEUED, ReembedJob.Status.RUNNING)


class ReembedLibraryArguments(Arguments):
    library_uid: str = Field(min_length=1, max_length=64, description="The library to re-embed.")


class ReembedState(BaseModel):
    job_id: str | None = Field(description="The re-embedding's job; null when there was nothing to do.")
    status: Literal["queued", "running", "complete", "failed", "cancelled", "unchanged"] = Field(
        description="queued for a background worker, running, complete (switched), failed or cancelled "
        "(the library kept its vectors and model), or unchanged: already on the servers' model."
    )
    library: LibraryRef
    model: str = Field(description="The model it is embedded with once done: the servers' own.")
    model_before: str = Field(description="The model it was embedded with when asked.")
    progress: str = Field(description="Where it is, e.g. 'embedded 1,024 of 5,210 chunks'.")
    done: int = Field(description="Chunks re-embedded, once complete.")
    error: str = Field(description="Why it failed, or that it was cancelled (empty otherwise).")
    created_at: datetime | None


def reembed_library(caller: Principal, args: ReembedLibraryArguments) -> ReembedState:
    library = selectors.get_library(args.library_uid)
    if not caller.manages(library.pk):
        raise InvalidArgument(
            f"re-embedding library {library.name!r} is for its managers; this caller does not manage it"
        )
    model = get_embedder().model_id
    if library.embedding_model in ("", model):
        return ReembedState(
            job_id=None,
            status="unchanged",
            library=LibraryRef(uid=library.uid, name=library.name),
            model=model,
            model_before=library.embedding_model or model,
            progress="",
            done=0,
            error="",
            created_at=None,
        )
    # One re-embedding of a library at a time: asked again meanwhile, the answer is where it is.
    under_way = (
        ReembedJob.objects.filter(library=library, status__in=UNDER_WAY).select_related("library").first()
    )
    if under_way is not None:
        return reembed_state(under_way)
    return reembed_state(tasks.enqueue_reembed(library, model=model, requested_by=caller.caller_key))


def reembed_state(job: ReembedJob) -> ReembedState:
    library: Library = job.library
    return ReembedState(
        job_id=job.uid,
        status=job.status,  # type: ignore[arg-type]  # ReembedJob.Status's values, as the literal lists them
        library=LibraryRef(uid=library.uid, name=library.name),
        model=job.model,
        model_before=job.model_before,
        progress=job.progress,
        done=job.done,
        error=job.error,
        created_at=job.created_at,
    )


def render_reembed(state: ReembedState) -> str:
    if state.status == "unchanged":
        return f"{state.library.name} is already embedded with {state.model}; nothing to do."
    head = f"Re-embedding {state.library.name} ({state.model_before} → {state.model}, job {state.job_id})"
    detail = state.error or state.progress
    return f"{head}: {state.status}{' — ' + detail if detail else ''}."


REEMBED_LIBRARY = ToolSpec(
    name="reembed_library",
    handler=reembed_library,
    arguments=ReembedLibraryArguments,
    result=ReembedState,
    title="Re-embed a library with the server's model",
    description=(
        "Embed every chunk of a library again with the model the servers embed with — for a library "
        "still on another model, whose vector searches are refused until then. The new vectors are built "
        "beside the old and switched at once; searches go on meanwhile. A background worker runs it: the "
        "answer is a job_id (a client with MCP tasks gets a task); asked again while it runs, the answer "
        "is where it is. Nothing to do (status unchanged) when the library is on the servers' model "
        "already. Only for a library this caller manages; needs a token allowed to write."
    ),
    render=render_reembed,
    annotations=DESTRUCTIVE_IDEMPOTENT_WRITE.model_copy(),
    writes=True,
)
