"""Check that an uploaded file really is the media type it was declared as.

Reads headers and a little data only (Pillow opens lazily; PyAV reads the container header and
decodes one frame), so probing a 1 GiB upload is cheap. MP4/M4A files are also checked for
truncation by walking their top-level boxes (seek-only), and PCM WAV files by comparing the
header's data size with the file size.
"""

from __future__ import annotations

import os
import struct
import wave

from .formats import CONTENT_TYPES, normalize_content_type
from .spec import ProbeResult

_PIL_FORMAT = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
# PyAV container format names (comma-separated in `container.format.name`) per type
_AV_FORMATS = {
    "video/mp4": {"mov", "mp4"},
    "audio/mp4": {"mov", "mp4", "m4a"},
    "video/webm": {"matroska", "webm"},
    "audio/ogg": {"ogg"},
    "audio/mpeg": {"mp3"},
    "audio/wav": {"wav"},
}
_DESCRIPTION = {
    "image/png": "a readable PNG image",
    "image/jpeg": "a readable JPEG image",
    "image/webp": "a readable WebP image",
    "video/mp4": "a readable MP4 video",
    "video/webm": "a readable WebM video",
    "audio/mpeg": "a readable MP3 file",
    "audio/wav": "a readable WAV file",
    "audio/mp4": "a readable MP4/M4A audio file",
    "audio/ogg": "a readable Ogg audio file",
}
_MP4_FIRST_BOXES = (b"ftyp", b"styp", b"moov", b"free", b"skip", b"wide", b"mdat")
# Decode every pixel only for images up to this many pixels (bounded memory).
_FULL_DECODE_PIXELS = 40_000_000


def _fail(declared: str, why: str) -> ValueError:
    return ValueError(f"declared {declared} but the file is not {_DESCRIPTION[declared]} ({why})")


def probe(path: str, declared_content_type: str) -> ProbeResult:
    declared = normalize_content_type(declared_content_type)
    if declared not in CONTENT_TYPES:
        raise ValueError(f"unsupported content type {declared_content_type!r}")
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise ValueError(f"cannot read the uploaded file: {exc.strerror}") from None
    if size == 0:
        raise _fail(declared, "it is empty")
    kind = CONTENT_TYPES[declared][1]
    if kind == "image":
        return _probe_image(path, declared)
    return _probe_av(path, declared, kind, size)


def _probe_image(path: str, declared: str) -> ProbeResult:
    from PIL import Image, UnidentifiedImageError

    expected = _PIL_FORMAT[declared]
    try:
        with Image.open(path) as img:
            if img.format != expected:
                raise _fail(declared, f"it is {img.format or 'an unknown format'}")
            width, height = img.size
            if width * height <= _FULL_DECODE_PIXELS:
                img.load()  # decodes everything: catches truncated and corrupt data
            else:
                img.verify()  # structure/CRC checks without holding the pixels
    except ValueError:
        raise
    except UnidentifiedImageError:
        raise _fail(declared, "unrecognised data") from None
    except (OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise _fail(declared, str(exc) or type(exc).__name__) from None
    return ProbeResult(media="image", content_type=declared, width=width, height=height)


def _mp4_truncated(path: str, size: int) -> str | None:
    """Walk the top-level ISO BMFF boxes by seeking; say why the file is cut short, if it is."""
    names: list[bytes] = []
    with open(path, "rb") as handle:
        if handle.read(8)[4:8] not in _MP4_FIRST_BOXES:
            return "it does not start with an MP4 box"
        offset = 0
        while offset < size:
            handle.seek(offset)
            header = handle.read(16)
            if len(header) < 8:
                return "it ends inside a box header"
            box_size, box_type = struct.unpack(">I4s", header[:8])
            if box_size == 1:
                if len(header) < 16:
                    return "it ends inside a box header"
                box_size = struct.unpack(">Q", header[8:16])[0]
            elif box_size == 0:
                box_size = size - offset  # box extends to the end of the file
            if box_size < 8:
                return f"box {box_type!r} has an invalid size"
            names.append(box_type)
            if offset + box_size > size:
                return f"the {box_type.decode('latin-1')} box is cut short (truncated upload?)"
            offset += box_size
    if b"moov" not in names:
        return "it has no moov box"
    return None


def _wav_truncated(path: str, size: int) -> str | None:
    try:
        with wave.open(path, "rb") as src:
            expected = src.getnframes() * src.getnchannels() * src.getsampwidth()
    except (wave.Error, EOFError):
        return None  # not plain PCM (e.g. float or compressed WAV): leave it to FFmpeg
    if expected > size:
        return "its data is shorter than the header says (truncated upload?)"
    return None


def _probe_av(path: str, declared: str, kind: str, size: int) -> ProbeResult:
    import av

    if declared in ("video/mp4", "audio/mp4"):
        problem = _mp4_truncated(path, size)
        if problem:
            raise _fail(declared, problem)
    if declared == "audio/wav":
        problem = _wav_truncated(path, size)
        if problem:
            raise _fail(declared, problem)
    try:
        container = av.open(path, "r")
    except (av.FFmpegError, OSError, UnicodeDecodeError) as exc:
        raise _fail(declared, _short(exc)) from None
    with container:
        names = set(container.format.name.split(","))
        if not names & _AV_FORMATS[declared]:
            raise _fail(declared, f"it is {container.format.long_name or container.format.name}")
        width = height = None
        pictures = _moving_video_streams(container)
        if kind == "video":
            if not pictures:
                raise _fail(declared, "it has no video track")
            stream = pictures[0]
            width, height = stream.codec_context.width, stream.codec_context.height
            duration = _duration(container, stream)
            _decode_one(container, stream, declared)
        else:
            if not container.streams.audio:
                raise _fail(declared, "it has no audio track")
            if declared == "audio/mp4" and pictures:
                raise _fail(declared, "it has a video track; declare it as video/mp4")
            stream = container.streams.audio[0]
            duration = _duration(container, stream)
            _decode_one(container, stream, declared)
    return ProbeResult(
        media=kind,  # type: ignore[arg-type]
        content_type=declared,
        width=width,
        height=height,
        duration_seconds=round(duration, 3) if duration is not None else None,
    )


def _moving_video_streams(container) -> list:
    """Video streams that are not cover art (an attached picture in an MP3 or M4A)."""
    from av.stream import Disposition

    return [
        stream
        for stream in container.streams.video
        if not (stream.disposition & Disposition.attached_pic)
    ]


def _duration(container, stream) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return None


def _decode_one(container, stream, declared: str) -> None:
    """Decode the first frame so a valid header over garbage data is still refused."""
    import av

    try:
        for _frame in container.decode(stream):
            return
    except (av.FFmpegError, ValueError) as exc:
        raise _fail(declared, _short(exc)) from None
    raise _fail(declared, "no decodable frame")


def _short(exc: BaseException) -> str:
    text = str(exc).split(": '", 1)[0]  # PyAV appends the file path; keep paths out of messages
    return text[:200] or type(exc).__name__
