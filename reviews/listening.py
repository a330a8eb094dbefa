"""A call's audio for the review page's player, behind the review page's own permission.

The file is read through the storage API (local files or an object store
alike) and never has a public URL. Byte ranges are served, because a browser
can only seek (play a quote from its start) in audio it can ask for by range.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator

from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from access.scope import scope_for
from qa.models import Recording
from reviews.views import supervisor_required

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_CHUNK = 256 * 1024
# Types the browser's <audio> element recognises, for the extensions ingest accepts.
_TYPES = {".opus": "audio/ogg", ".ogg": "audio/ogg", ".m4a": "audio/mp4", ".flac": "audio/flac", ".wav": "audio/wav"}


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """The (first, last) byte a single Range header asks for, clipped to the file; None if it is not satisfiable."""
    match = _RANGE.match(header.strip())
    if not match or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if first == "":  # a suffix: the last N bytes
        return (max(size - int(last), 0), size - 1) if int(last) > 0 and size else None
    first_byte, last_byte = int(first), min(int(last), size - 1) if last else size - 1
    return (first_byte, last_byte) if first_byte <= last_byte else None


def _read(file, first: int, length: int) -> Iterator[bytes]:
    with file:
        file.seek(first)
        while length > 0 and (chunk := file.read(min(_CHUNK, length))):
            length -= len(chunk)
            yield chunk


@supervisor_required
@require_GET
def recording_audio(request: HttpRequest, pk: int) -> HttpResponse:
    recording = get_object_or_404(Recording.objects.filter(scope_for(request.user).recordings_q()).only("audio"), pk=pk)
    if not recording.audio:
        raise Http404("This recording has no audio.")
    storage, name = recording.audio.storage, recording.audio.name
    size = storage.size(name)
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    content_type = _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    first, last, status = 0, size - 1, 200
    if header := request.headers.get("Range"):
        requested = _byte_range(header, size)
        if requested is None:
            response = HttpResponse(status=416)
            response["Content-Range"] = f"bytes */{size}"
            return response
        (first, last), status = requested, 206
    response = StreamingHttpResponse(_read(storage.open(name, "rb"), first, last - first + 1), status=status)
    response["Content-Type"] = content_type
    response["Content-Length"] = str(last - first + 1)
    response["Accept-Ranges"] = "bytes"
    if status == 206:
        response["Content-Range"] = f"bytes {first}-{last}/{size}"
    # A call's audio is personal data: no shared cache may keep it.
    response["Cache-Control"] = "private, no-store"
    return response
