"""An uploaded file is read no further than INGEST_MAX_FILE_BYTES: past it the rest is passed over
(Django's SkipFile), never kept in memory or on disk, and the view says it was too large. Files are
spooled, while they arrive, under the data directory (FILE_UPLOAD_TEMP_DIR), never elsewhere."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile


class SizeCappedUploadHandler(FileUploadHandler):
    """First of the upload handlers: counts a file's bytes and skips the file past the limit."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self._received = 0
        if self.request is not None:  # the order files came in, to answer about them in that order
            arrived = getattr(self.request, "arrived_uploads", [])
            arrived.append(self.file_name or "")
            self.request.arrived_uploads = arrived  # type: ignore[attr-defined]

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self._received += len(raw_data)
        if self._received > settings.INGEST_MAX_FILE_BYTES:
            if self.request is not None:
                too_large = getattr(self.request, "too_large_uploads", [])
                too_large.append(self.file_name or "")
                self.request.too_large_uploads = too_large  # type: ignore[attr-defined]
            raise SkipFile()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the handlers after this one keep the file
