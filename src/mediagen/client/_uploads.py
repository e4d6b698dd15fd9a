"""Upload sources (a path, bytes, or a file object) and the register-then-PUT flow.

The bytes are streamed in chunks (constant memory for a file of any size) with exactly the
``required_headers`` of the registration; the API key is never sent to the upload URL. A
ticket that expired (its ``expires_at`` passed, or the upload URL answers 403) is registered
again, once.
"""

from __future__ import annotations

import io
import mimetypes
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from mediagen.client import _requests
from mediagen.client._effects import Call, Flow, Put
from mediagen.client._errors import PermissionDeniedError
from mediagen.client._models import Asset, UploadTicket
from mediagen.wire import _names as _wire

CHUNK = 1 << 20


@dataclass
class Source:
    """What to upload: exactly one of ``path``, ``data`` or ``file``."""

    filename: str
    content_type: str
    size: int
    path: Path | None = None
    data: bytes | None = None
    file: BinaryIO | None = None
    start: int = 0  # position of a file object when given (rewound to it on a retry)

    def chunks(self) -> Iterator[bytes]:
        if self.data is not None:
            yield self.data
            return
        if self.path is not None:
            with open(self.path, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    yield chunk
            return
        assert self.file is not None
        if self.file.seekable():
            self.file.seek(self.start)
        remaining = self.size
        while remaining > 0 and (chunk := self.file.read(min(CHUNK, remaining))):
            remaining -= len(chunk)
            yield chunk

    async def achunks(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks():
            yield chunk

    def content(self) -> Any:
        return self.data if self.data is not None else self.chunks()

    def acontent(self) -> Any:
        return self.data if self.data is not None else self.achunks()


def guess_content_type(filename: str) -> str | None:
    suffix = Path(filename).suffix.lower()
    if suffix in _wire.SUFFIX_CONTENT_TYPES:
        return _wire.SUFFIX_CONTENT_TYPES[suffix]
    return mimetypes.guess_type(filename)[0]


def make_source(
    source: Any, filename: str | None = None, content_type: str | None = None
) -> Source:
    """A :class:`Source` from a path (str / PathLike), bytes, or a binary file object."""
    path = data = file = None
    start = 0
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        size = len(data)
        if filename is None:
            if content_type is None:
                raise ValueError("uploading bytes needs filename= or content_type=")
            filename = "upload" + _wire.CONTENT_TYPE_SUFFIXES.get(content_type, "")
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"no such file to upload: {path}")
        size = path.stat().st_size
        filename = filename or path.name
    elif hasattr(source, "read"):
        file = source
        name = getattr(source, "name", None)
        if filename is None and isinstance(name, str):
            filename = os.path.basename(name)
        if isinstance(source, io.BytesIO):
            start = source.tell()
            size = len(source.getbuffer()) - start
        else:
            try:
                start = source.tell()
                size = os.fstat(source.fileno()).st_size - start
            except (OSError, AttributeError, io.UnsupportedOperation):
                data = source.read()
                file = None
                size = len(data)
        if filename is None:
            if content_type is None:
                raise ValueError("uploading a file object needs filename= or content_type=")
            filename = "upload" + _wire.CONTENT_TYPE_SUFFIXES.get(content_type, "")
    else:
        raise TypeError(
            f"upload a path, bytes or a binary file object, not {type(source).__name__}"
        )
    content_type = content_type or guess_content_type(filename)
    if not content_type:
        raise ValueError(
            f"cannot tell the content type of {filename!r}; pass content_type= "
            f"(one of {', '.join(_wire.UPLOAD_CONTENT_TYPES)})"
        )
    if size <= 0:
        raise ValueError("cannot upload an empty file")
    return Source(filename, content_type, size, path=path, data=data, file=file, start=start)


def register(client: Any, filename: str, content_type: str, size_bytes: int) -> Flow[UploadTicket]:
    data = yield Call(_requests.register_upload(filename, content_type, size_bytes))
    return UploadTicket.from_dict(data)


def upload(client: Any, source: Source, ticket: UploadTicket | None = None) -> Flow[Asset]:
    """Flow: register (unless ``ticket`` is given), PUT the bytes, return the ready Asset."""
    if ticket is None or ticket.expired():
        ticket = yield from register(client, source.filename, source.content_type, source.size)
    registered_again = False
    while True:
        try:
            data = yield Put(str(ticket.upload_url), dict(ticket.required_headers), source)
        except PermissionDeniedError:
            # A 403 from the upload URL means its signature no longer holds (expired, or the
            # clocks disagree): a fresh ticket fixes that; the message is not read (it is not
            # meant for parsing). Once only: a second refusal is the answer.
            if registered_again:
                raise
            ticket = yield from register(client, source.filename, source.content_type, source.size)
            registered_again = True
            continue
        break
    merged = {
        "media_type": ticket.media_type,
        "content_type": source.content_type,
        "filename": source.filename,
        **(data or {}),
    }
    merged.setdefault("asset_id", ticket.asset_id)
    return Asset.from_dict(merged)
