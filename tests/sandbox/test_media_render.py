"""Rendered outputs decode back to exactly what the spec asked for (real files, real decoders)."""

from __future__ import annotations

import wave

import av
import numpy as np
import pytest
from PIL import Image

from mediagen_sandbox.media import OutputSpec, extension_for, render, speech as speech_module


def _render(tmp_path, spec: OutputSpec, name: str = "out"):
    dest = tmp_path / f"{name}{extension_for(spec.content_type)}"
    result = render(spec, str(dest))
    return dest, result


def _first_channel(frame) -> np.ndarray:
    """Channel 0 of a decoded audio frame as floats in [-1, 1], planar or packed."""
    data = frame.to_ndarray()
    data = data[0] if frame.format.is_planar else data.reshape(-1)[:: len(frame.layout.channels)]
    if np.issubdtype(data.dtype, np.integer):
        return data.astype(np.float64) / np.iinfo(data.dtype).max
    return data.astype(np.float64)


def _decoded_audio(path) -> tuple[np.ndarray, int]:
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        chunks = [_first_channel(frame) for frame in container.decode(stream)]
        return np.concatenate(chunks), stream.rate


# ---------------------------------------------------------------- images


@pytest.mark.parametrize(
    ("content_type", "pil_format", "mode"),
    [("image/png", "PNG", "RGB"), ("image/webp", "WEBP", "RGB"), ("image/jpeg", "JPEG", "RGB")],
)
def test_image_has_exact_size_and_format(tmp_path, content_type, pil_format, mode):
    spec = OutputSpec(
        media="image", content_type=content_type, width=640, height=352, text="A fox", seed=3
    )
    dest, result = _render(tmp_path, spec)
    with Image.open(dest) as img:
        assert img.format == pil_format
        assert img.size == (640, 352)
        assert img.mode == mode
        pixels = np.asarray(img.convert("RGB"), dtype=np.float64)
    assert pixels.std() > 10, "a real picture, not a flat fill"
    assert (result.width, result.height) == (640, 352)
    assert result.content_type == content_type
    assert result.size_bytes == dest.stat().st_size
    assert result.duration_seconds is None


def test_image_is_deterministic_per_seed_and_differs_across_seeds(tmp_path):
    def pixels(seed: int, name: str) -> np.ndarray:
        spec = OutputSpec(media="image", content_type="image/png", width=96, height=64, seed=seed)
        dest, _ = _render(tmp_path, spec, name)
        return np.asarray(Image.open(dest).convert("RGB"))

    assert np.array_equal(pixels(7, "a"), pixels(7, "b"))
    assert not np.array_equal(pixels(7, "c"), pixels(8, "d"))


@pytest.mark.parametrize("content_type", ["image/png", "image/webp"])
def test_transparent_image_keeps_an_alpha_channel_with_a_clear_background(tmp_path, content_type):
    spec = OutputSpec(
        media="image", content_type=content_type, width=256, height=256, transparent=True
    )
    dest, _ = _render(tmp_path, spec)
    with Image.open(dest) as img:
        assert img.mode == "RGBA"
        alpha = np.asarray(img.getchannel("A"))
    assert (alpha == 0).mean() > 0.2, "most of the background is fully transparent"
    assert (alpha == 255).any(), "shapes are opaque"


def test_transparent_jpeg_falls_back_to_rgb(tmp_path):
    spec = OutputSpec(
        media="image", content_type="image/jpeg", width=128, height=96, transparent=True
    )
    dest, _ = _render(tmp_path, spec)
    with Image.open(dest) as img:
        assert img.mode == "RGB"


def test_prompt_text_changes_the_picture(tmp_path):
    def pixels(text: str, name: str) -> np.ndarray:
        spec = OutputSpec(
            media="image", content_type="image/png", width=320, height=240, text=text, seed=1
        )
        dest, _ = _render(tmp_path, spec, name)
        return np.asarray(Image.open(dest).convert("RGB"), dtype=np.int16)

    assert np.abs(pixels("", "plain") - pixels("a lighthouse at night", "captioned")).max() > 100


def test_input_image_is_blended_in_so_chaining_is_visible(tmp_path):
    red = tmp_path / "red.png"
    Image.new("RGB", (50, 40), (255, 0, 0)).save(red)
    base = OutputSpec(media="image", content_type="image/png", width=160, height=120, seed=5)
    plain, _ = _render(tmp_path, base, "plain")
    chained_spec = OutputSpec(
        media="image",
        content_type="image/png",
        width=160,
        height=120,
        seed=5,
        inputs={"reference_images[0]": str(red)},
    )
    chained, result = _render(tmp_path, chained_spec, "chained")
    red_plain = np.asarray(Image.open(plain).convert("RGB"), dtype=np.float64)[..., 0].mean()
    red_chained = np.asarray(Image.open(chained).convert("RGB"), dtype=np.float64)[..., 0].mean()
    assert red_chained > red_plain + 40
    assert (result.width, result.height) == (160, 120)


def test_an_opaque_image_drawn_in_rgb_has_the_pixels_of_rgba_compositing(tmp_path):
    """Opaque images are drawn in RGB, each layer pasted through its alpha: the same pixels as
    compositing every layer in RGBA and dropping the alpha at the end, at half the cost."""
    from mediagen_sandbox.media import drawing
    from mediagen_sandbox.media.images import compose_picture

    red = tmp_path / "red.png"
    Image.new("RGB", (50, 40), (255, 0, 0)).save(red)
    spec = OutputSpec(
        media="image",
        content_type="image/png",
        width=320,
        height=240,
        seed=9,
        text="a lighthouse at night",
        inputs={"reference_images[0]": str(red)},
    )
    drawn = compose_picture(spec, 320, 240)
    assert drawn.mode == "RGB"

    composited = drawing.gradient_picture(320, 240, 9).convert("RGBA")
    source = drawing.load_picture(str(red), 320, 240)
    assert source is not None
    source.putalpha(source.getchannel("A").point(lambda v: int(v * 0.6)))
    composited.alpha_composite(source)
    drawing.draw_shapes(composited, 9, count=4)
    patch = drawing.caption(spec.text, 320, 240)
    assert patch is not None
    composited.alpha_composite(patch, drawing.caption_position(patch, 320, 240))
    assert np.array_equal(np.asarray(drawn), np.asarray(composited.convert("RGB")))


# ---------------------------------------------------------------- video


@pytest.fixture(scope="module")
def video_with_audio(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("video")
    spec = OutputSpec(
        media="video",
        content_type="video/mp4",
        width=320,
        height=180,
        fps=24,
        duration_seconds=2.5,
        with_audio=True,
        text="A paper boat on a pond",
        seed=11,
    )
    return _render(tmp_path, spec)


def test_video_is_h264_yuv420p_mp4_of_exact_size_fps_and_duration(video_with_audio):
    dest, result = video_with_audio
    with av.open(str(dest)) as container:
        assert "mp4" in container.format.name
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert stream.codec_context.pix_fmt == "yuv420p"
        assert (stream.codec_context.width, stream.codec_context.height) == (320, 180)
        assert stream.average_rate == 24
        frames = list(container.decode(stream))
    assert len(frames) == 60  # round(2.5 s * 24 fps)
    video_duration = float(frames[-1].pts * frames[-1].time_base) + 1 / 24
    assert abs(video_duration - 2.5) <= 1 / 24
    assert abs(result.duration_seconds - 2.5) <= 1 / 24
    assert (result.width, result.height) == (320, 180)
    assert result.size_bytes == dest.stat().st_size
    # the picture moves
    first = frames[1].to_ndarray(format="rgb24").astype(np.int16)
    later = frames[40].to_ndarray(format="rgb24").astype(np.int16)
    assert np.abs(first - later).mean() > 3


def test_video_is_faststart(video_with_audio):
    dest, _ = video_with_audio
    data = dest.read_bytes()
    assert 0 <= data.find(b"moov") < data.find(b"mdat"), "moov before mdat: plays while loading"


def test_video_has_an_aac_track_of_the_same_length_when_asked(video_with_audio):
    dest, _ = video_with_audio
    with av.open(str(dest)) as container:
        audio = container.streams.audio[0]
        assert audio.codec_context.name == "aac"
        duration = float(audio.duration * audio.time_base)
        samples = np.concatenate([_first_channel(f) for f in container.decode(audio)])
    assert abs(duration - 2.5) <= 1 / 24
    assert np.sqrt(np.mean(samples**2)) > 0.01, "audible, not silence"


def test_video_without_audio_has_no_audio_track(tmp_path):
    spec = OutputSpec(
        media="video", content_type="video/mp4", width=64, height=48, fps=12, duration_seconds=1
    )
    dest, result = _render(tmp_path, spec)
    with av.open(str(dest)) as container:
        assert not container.streams.audio
        assert len(list(container.decode(video=0))) == 12
    assert result.duration_seconds == pytest.approx(1.0, abs=1 / 12)


def test_odd_video_size_is_refused(tmp_path):
    spec = OutputSpec(
        media="video", content_type="video/mp4", width=65, height=48, duration_seconds=1
    )
    with pytest.raises(ValueError, match="even"):
        _render(tmp_path, spec)
    assert list(tmp_path.iterdir()) == [], "a failed render leaves no file behind"


def test_first_and_last_frame_inputs_open_and_close_the_video(tmp_path):
    red, blue = tmp_path / "red.png", tmp_path / "blue.jpg"
    Image.new("RGB", (200, 100), (230, 20, 20)).save(red)
    Image.new("RGB", (90, 90), (20, 20, 230)).save(blue)
    spec = OutputSpec(
        media="video",
        content_type="video/mp4",
        width=128,
        height=72,
        fps=12,
        duration_seconds=3,
        inputs={"first_frame": str(red), "last_frame": str(blue)},
    )
    dest, _ = _render(tmp_path, spec)
    with av.open(str(dest)) as container:
        frames = [
            f.to_ndarray(format="rgb24").astype(np.float64) for f in container.decode(video=0)
        ]
    opening, closing = frames[0].mean(axis=(0, 1)), frames[-1].mean(axis=(0, 1))
    assert opening[0] > 180, opening
    assert opening[2] < 70, opening
    assert closing[2] > 180, closing
    assert closing[0] < 70, closing


def test_source_video_supplies_the_opening_frames(tmp_path):
    green = OutputSpec(
        media="video",
        content_type="video/mp4",
        width=96,
        height=64,
        fps=12,
        duration_seconds=1,
        inputs={"first_frame": str(_solid(tmp_path, (20, 220, 20)))},
    )
    source, _ = _render(tmp_path, green, "source")
    extended = OutputSpec(
        media="video",
        content_type="video/mp4",
        width=96,
        height=64,
        fps=12,
        duration_seconds=2,
        inputs={"source_video": str(source)},
    )
    dest, result = _render(tmp_path, extended, "extended")
    with av.open(str(dest)) as container:
        frames = [
            f.to_ndarray(format="rgb24").astype(np.float64) for f in container.decode(video=0)
        ]
    assert len(frames) == 24
    assert result.duration_seconds == pytest.approx(2.0, abs=1 / 12)
    opening = frames[0].mean(axis=(0, 1))
    assert opening[1] > 180, opening
    assert opening[0] < 80, opening


def test_audio_input_becomes_the_soundtrack_of_exactly_the_video_length(tmp_path):
    speech_spec = OutputSpec(
        media="audio", content_type="audio/mpeg", audio_kind="speech", text="Hi there!"
    )
    voice, spoken = _render(tmp_path, speech_spec, "voice")
    spec = OutputSpec(
        media="video",
        content_type="video/mp4",
        width=64,
        height=64,
        fps=12,
        duration_seconds=2,
        with_audio=True,
        inputs={"audio": str(voice)},
    )
    dest, _ = _render(tmp_path, spec, "avatar")
    samples, rate = _decoded_audio(dest)
    with av.open(str(dest)) as container:
        track = container.streams.audio[0]
        assert float(track.duration * track.time_base) == pytest.approx(2.0, abs=1 / 12)
    speaking = int(spoken.duration_seconds * rate)
    # the speech is there, then silence pads the rest (not the synthetic chord)
    assert np.sqrt(np.mean(samples[: speaking // 2] ** 2)) > 0.02
    assert np.sqrt(np.mean(samples[speaking + rate // 10 :] ** 2)) < 0.005


def _solid(tmp_path, colour) -> object:
    path = tmp_path / "solid.png"
    Image.new("RGB", (96, 64), colour).save(path)
    return path


# ---------------------------------------------------------------- audio


@pytest.mark.parametrize("content_type", ["audio/mpeg", "audio/wav"])
def test_music_has_the_exact_duration(tmp_path, content_type):
    spec = OutputSpec(
        media="audio",
        content_type=content_type,
        audio_kind="music",
        duration_seconds=3.7,
        seed=4,
        bpm=120,
    )
    dest, result = _render(tmp_path, spec)
    samples, rate = _decoded_audio(dest)
    assert abs(samples.size / rate - 3.7) <= 0.05
    assert abs(result.duration_seconds - 3.7) <= 0.05
    assert np.sqrt(np.mean(samples**2)) > 0.05
    assert result.size_bytes == dest.stat().st_size
    if content_type == "audio/wav":
        with wave.open(str(dest)) as src:
            assert src.getnframes() / src.getframerate() == pytest.approx(3.7, abs=1e-4)
    else:
        with av.open(str(dest)) as container:
            assert container.format.name == "mp3"


def test_music_follows_the_requested_sample_rate(tmp_path):
    spec = OutputSpec(
        media="audio",
        content_type="audio/wav",
        audio_kind="music",
        duration_seconds=1,
        sample_rate=24000,
    )
    dest, _ = _render(tmp_path, spec)
    with wave.open(str(dest)) as src:
        assert src.getframerate() == 24000


def test_real_espeak_speech_is_used_here():
    assert speech_module.espeak_available(), "libespeak-ng from espeakng-loader must load"
    samples, rate, real = speech_module.synthesize([("voice_aria", "Hello world.")])
    assert real
    assert rate > 8000
    assert samples.size > rate * 0.3


@pytest.mark.parametrize("content_type", ["audio/mpeg", "audio/wav"])
def test_speech_is_audible_and_longer_for_longer_text(tmp_path, content_type):
    def speak(text: str, name: str):
        spec = OutputSpec(
            media="audio",
            content_type=content_type,
            audio_kind="speech",
            text=text,
            voice="voice_aria",
        )
        dest, result = _render(tmp_path, spec, name)
        samples, rate = _decoded_audio(dest)
        assert abs(result.duration_seconds - samples.size / rate) <= 0.05
        assert np.sqrt(np.mean(samples**2)) > 0.02, "speech is not silence"
        return result.duration_seconds

    short = speak("Hello there.", "short")
    long = speak("Hello there. This sentence is a good deal longer than the first one.", "long")
    assert short > 0.4
    assert long > short * 2


def test_speech_speed_changes_the_duration(tmp_path):
    def duration(speed: float, name: str) -> float:
        spec = OutputSpec(
            media="audio",
            content_type="audio/wav",
            audio_kind="speech",
            speed=speed,
            text="The quick brown fox jumps over the lazy dog.",
        )
        return _render(tmp_path, spec, name)[1].duration_seconds

    assert duration(2.0, "fast") < duration(1.0, "normal") * 0.75


def test_multi_speaker_segments_use_different_voices_in_one_file(tmp_path):
    text = "This is a test of the speaker."
    assert speech_module.voice_style("voice_aria") != speech_module.voice_style("voice_bravo")
    first, rate, _ = speech_module.synthesize([("voice_aria", text)])
    second, _, _ = speech_module.synthesize([("voice_bravo", text)])
    n = min(first.size, second.size)
    assert first.size != second.size or not np.allclose(first[:n], second[:n])

    spec = OutputSpec(
        media="audio",
        content_type="audio/wav",
        audio_kind="speech",
        segments=(("voice_aria", text), ("voice_bravo", text)),
    )
    _, result = _render(tmp_path, spec)
    # both speakers in one file, with a pause between them
    expected = (first.size + second.size) / rate
    assert result.duration_seconds == pytest.approx(expected, abs=0.5)
    assert result.duration_seconds > expected


def test_synthetic_fallback_voice_when_espeak_is_unavailable(monkeypatch):
    monkeypatch.setattr(speech_module, "_get_engine", lambda: None)
    samples, rate, real = speech_module.synthesize([("voice_aria", "one two three four")])
    assert not real
    assert samples.size > rate * 0.5
    assert np.sqrt(np.mean(samples.astype(np.float64) ** 2)) > 0.02


def test_unknown_content_type_is_refused(tmp_path):
    with pytest.raises(ValueError, match="cannot render"):
        render(OutputSpec(media="image", content_type="image/gif"), str(tmp_path / "x.gif"))
