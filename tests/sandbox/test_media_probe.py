"""`probe` accepts real files of the declared type and refuses everything else clearly."""

from __future__ import annotations

import os
import wave

import numpy as np
import pytest
from PIL import Image

from mediagen_sandbox.media import OutputSpec, extension_for, probe, render

SPECS = {
    "image/png": OutputSpec(media="image", content_type="image/png", width=120, height=80),
    "image/jpeg": OutputSpec(media="image", content_type="image/jpeg", width=120, height=80),
    "image/webp": OutputSpec(media="image", content_type="image/webp", width=120, height=80),
    "video/mp4": OutputSpec(
        media="video",
        content_type="video/mp4",
        width=160,
        height=90,
        fps=24,
        duration_seconds=1.5,
        with_audio=True,
    ),
    "audio/mpeg": OutputSpec(
        media="audio", content_type="audio/mpeg", audio_kind="music", duration_seconds=2.0
    ),
    "audio/wav": OutputSpec(
        media="audio", content_type="audio/wav", audio_kind="music", duration_seconds=2.0
    ),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """One real rendered file per content type, plus M4A/WebM/Ogg made with PyAV."""
    import av

    root = tmp_path_factory.mktemp("probe")
    made = {}
    for content_type, spec in SPECS.items():
        path = root / f"real{extension_for(content_type)}"
        render(spec, str(path))
        made[content_type] = path
    for content_type, fmt, codec in (
        ("audio/mp4", "mp4", "aac"),
        ("audio/ogg", "ogg", "libopus"),
    ):
        path = root / f"real{extension_for(content_type)}"
        with av.open(str(path), "w", format=fmt) as out:
            stream = out.add_stream(codec, rate=48000, layout="mono")
            tone = (0.2 * np.sin(np.arange(48000) * 0.05)).astype(np.float32)
            for start in range(0, tone.size, 960):
                frame = av.AudioFrame.from_ndarray(
                    tone[None, start : start + 960], format="flt", layout="mono"
                )
                frame.sample_rate = 48000
                frame.pts = start
                for packet in stream.encode(frame):
                    out.mux(packet)
            for packet in stream.encode(None):
                out.mux(packet)
        made[content_type] = path
    webm = root / "real.webm"
    with av.open(str(webm), "w", format="webm") as out:
        stream = out.add_stream("libvpx-vp9", rate=12)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.options = {"deadline": "realtime", "cpu-used": "8"}
        for index in range(12):
            pixels = np.full((48, 64, 3), index * 20, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts = index
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    made["video/webm"] = webm
    return made


@pytest.mark.parametrize("content_type", ["image/png", "image/jpeg", "image/webp"])
def test_probe_accepts_real_images(files, content_type):
    result = probe(str(files[content_type]), content_type)
    assert (result.media, result.content_type) == ("image", content_type)
    assert (result.width, result.height) == (120, 80)
    assert result.duration_seconds is None


def test_probe_accepts_real_mp4_video(files):
    result = probe(str(files["video/mp4"]), "video/mp4")
    assert (result.media, result.width, result.height) == ("video", 160, 90)
    assert result.duration_seconds == pytest.approx(1.5, abs=1 / 24)


def test_probe_accepts_real_webm_video(files):
    result = probe(str(files["video/webm"]), "video/webm")
    assert (result.media, result.width, result.height) == ("video", 64, 48)
    assert result.duration_seconds == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize(
    ("content_type", "seconds"),
    [("audio/mpeg", 2.0), ("audio/wav", 2.0), ("audio/mp4", 1.0), ("audio/ogg", 1.0)],
)
def test_probe_accepts_real_audio(files, content_type, seconds):
    result = probe(str(files[content_type]), content_type)
    assert (result.media, result.content_type) == ("audio", content_type)
    assert result.width is None
    assert result.height is None
    assert result.duration_seconds == pytest.approx(seconds, abs=0.05)


def test_probe_normalizes_parameters_and_aliases(files):
    assert probe(str(files["audio/mpeg"]), "audio/mp3").content_type == "audio/mpeg"
    assert probe(str(files["video/mp4"]), "Video/MP4; codecs=avc1").content_type == "video/mp4"


@pytest.mark.parametrize(
    ("actual", "declared", "message"),
    [
        ("image/png", "video/mp4", "declared video/mp4 but the file is not a readable MP4"),
        ("image/png", "image/jpeg", "is PNG"),
        ("image/jpeg", "image/webp", "is JPEG"),
        ("video/mp4", "audio/mpeg", "declared audio/mpeg"),
        ("video/mp4", "audio/mp4", "video track"),
        ("audio/mpeg", "audio/wav", "declared audio/wav"),
        ("audio/wav", "video/mp4", "declared video/mp4"),
        ("audio/mp4", "video/mp4", "no video track"),
        ("video/webm", "video/mp4", "declared video/mp4"),
        ("audio/ogg", "video/webm", "declared video/webm"),
    ],
)
def test_probe_rejects_a_declared_type_the_bytes_are_not(files, actual, declared, message):
    with pytest.raises(ValueError, match=message):
        probe(str(files[actual]), declared)


@pytest.mark.parametrize("declared", [*sorted(SPECS), "audio/mp4", "audio/ogg", "video/webm"])
def test_probe_rejects_random_bytes(tmp_path, declared):
    path = tmp_path / "noise.bin"
    path.write_bytes(np.random.default_rng(0).bytes(50_000))
    with pytest.raises(ValueError, match=f"declared {declared} but the file is not"):
        probe(str(path), declared)


@pytest.mark.parametrize(
    "content_type", ["image/png", "image/jpeg", "image/webp", "video/mp4", "audio/wav"]
)
def test_probe_rejects_a_truncated_file(files, tmp_path, content_type):
    data = files[content_type].read_bytes()
    path = tmp_path / f"cut{extension_for(content_type)}"
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ValueError, match=f"declared {content_type} but the file is not"):
        probe(str(path), content_type)


def test_probe_rejects_an_empty_file_and_an_unknown_type(tmp_path):
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        probe(str(empty), "image/png")
    with pytest.raises(ValueError, match="unsupported content type"):
        probe(str(empty), "application/pdf")


def test_probe_error_messages_do_not_leak_the_server_path(tmp_path):
    secret_dir = tmp_path / "secret-data-dir"
    secret_dir.mkdir()
    path = secret_dir / "upload.bin"
    path.write_bytes(b"\x00" * 1000)
    for declared in ("video/mp4", "audio/mpeg", "image/png", "audio/wav"):
        with pytest.raises(ValueError) as info:
            probe(str(path), declared)
        assert "secret-data-dir" not in str(info.value)


def test_probe_reads_only_headers_of_a_huge_mp4(files, tmp_path):
    """A big upload (sparse file: 1 GiB of mdat) is probed without reading it all."""
    real = files["video/mp4"].read_bytes()
    path = tmp_path / "huge.mp4"
    with open(path, "wb") as out:
        out.write(real)
        size = 1 << 30
        # a trailing 'free' box whose body is a hole: the file is 1 GiB but costs no disk
        out.write((size - len(real)).to_bytes(4, "big") + b"free")
        out.truncate(size)
    assert os.path.getsize(path) == 1 << 30
    result = probe(str(path), "video/mp4")
    assert result.duration_seconds == pytest.approx(1.5, abs=1 / 24)


def test_probe_wav_header_claiming_more_data_than_present(tmp_path):
    path = tmp_path / "liar.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x01\x00" * 8000)
    data = bytearray(path.read_bytes())
    data[40:44] = (10 * 16000).to_bytes(4, "little")  # claim 10 s of data
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="truncated"):
        probe(str(path), "audio/wav")


def test_probe_large_image_uses_header_checks_only(tmp_path):
    path = tmp_path / "big.png"
    Image.new("L", (8000, 6000), 128).save(path, compress_level=1)
    result = probe(str(path), "image/png")
    assert (result.width, result.height) == (8000, 6000)


def test_probe_accepts_an_mp3_with_cover_art(files, tmp_path):
    """An ID3v2 APIC picture shows up as a video stream; it is still an audio file."""
    import io

    cover = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 10, 10)).save(cover, format="PNG")
    body = b"\x00image/png\x00\x03\x00" + cover.getvalue()
    frame = b"APIC" + len(body).to_bytes(4, "big") + b"\x00\x00" + body
    size = len(frame)
    syncsafe = bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F])
    path = tmp_path / "cover.mp3"
    path.write_bytes(b"ID3\x03\x00\x00" + syncsafe + frame + files["audio/mpeg"].read_bytes())
    result = probe(str(path), "audio/mpeg")
    assert result.media == "audio"
    assert result.duration_seconds == pytest.approx(2.0, abs=0.05)
