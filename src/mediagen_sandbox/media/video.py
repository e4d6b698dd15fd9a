"""Video: H.264 (yuv420p) MP4 with an optional AAC track, exactly the requested length.

Frames are a scrolling seeded gradient with shapes, the prompt as a caption and a frame counter.
Inputs shape the picture: ``first_frame``/``last_frame`` images open and close the clip, a
source video (extend/edit/enhance) supplies the opening frames, other images are blended in.
Everything is cheap per frame (array slicing and small patches) so 1080p stays fast.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
from PIL import Image, ImageDraw

from . import drawing
from .formats import atomic_destination
from .spec import OutputSpec, RenderedOutput

log = logging.getLogger(__name__)

AUDIO_RATE = 48000
_AAC_FRAME = 1024
_CROSSFADE_SECONDS = 0.75
_FIRST_FRAME_KEYS = ("first_frame", "image", "start_image", "start_frame")
_LAST_FRAME_KEYS = ("last_frame", "end_image", "end_frame")
_SOURCE_VIDEO_KEYS = ("source_video", "video", "source_generation")
# an audio input (audio-driven avatar, lip-sync): becomes the soundtrack when audio is asked for
_AUDIO_KEYS = ("audio", "audio_input", "driving_audio", "source_audio")


def _input(inputs: dict[str, str], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if key in inputs:
            return inputs[key]
    return None


def _blend(a: np.ndarray, b: np.ndarray, weight_b: float) -> np.ndarray:
    """(1-w)*a + w*b in integer arithmetic (uint8 buffers of the same shape)."""
    w = round(max(0.0, min(1.0, weight_b)) * 256)
    if w <= 0:
        return a
    if w >= 256:
        return b
    mixed = a.astype(np.uint16) * (256 - w) + b.astype(np.uint16) * w
    return (mixed >> 8).astype(np.uint8)


def rgb_to_yuv420(rgb: np.ndarray) -> np.ndarray:
    """An (h, w, 3) RGB array as a flat planar YUV 4:2:0 buffer (Y, then U, then V)."""
    import av

    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
    return frame.reformat(format="yuv420p").to_ndarray().reshape(-1)


class _Planes:
    """Views of the Y, U and V planes inside one flat yuv420p buffer of a given size."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.luma = width * height
        self.chroma = (width // 2) * (height // 2)

    def split(self, buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        w, h, n, c = self.width, self.height, self.luma, self.chroma
        return (
            buffer[:n].reshape(h, w),
            buffer[n : n + c].reshape(h // 2, w // 2),
            buffer[n + c : n + 2 * c].reshape(h // 2, w // 2),
        )


def _source_frames(path: str, width: int, height: int) -> Iterator[np.ndarray]:
    """Flat yuv420p frames of an input video scaled to the output size; nothing if unreadable."""
    import av

    try:
        with av.open(path) as container:
            if not container.streams.video:
                return
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                scaled = frame.reformat(width=width, height=height, format="yuv420p")
                yield scaled.to_ndarray().reshape(-1)
    except (av.FFmpegError, OSError, ValueError) as exc:
        # a damaged input stops supplying frames; the animation carries on from there
        log.warning("source video %s stopped decoding: %s", os.path.basename(path), exc)


def _even(value: int) -> int:
    return value - (value % 2)


class _FrameMaker:
    """Builds frame ``i`` of ``count`` as a flat yuv420p ``uint8`` buffer.

    Working in the encoder's own pixel format means no colour conversion per frame: the
    background is a slice of a precomputed strip, overlays touch only small regions.
    """

    def __init__(self, spec: OutputSpec, width: int, height: int, count: int) -> None:
        self.width, self.height, self.count = width, height, count
        self.planes = _Planes(width, height)
        # a background twice as wide as the frame whose colour cycle repeats: scrolling it
        # by up to one frame width is a slice, never a recomputation
        strip = drawing.gradient_picture(2 * width, height, spec.seed, span=4.0)
        strip = strip.convert("RGBA")
        drawing.draw_shapes(strip, spec.seed, count=9)
        for key, path in sorted(spec.inputs.items()):
            if key in _FIRST_FRAME_KEYS + _LAST_FRAME_KEYS + _SOURCE_VIDEO_KEYS:
                continue
            picture = drawing.load_picture(path, width, height)
            if picture is not None:
                # a reference image tints the strip: itself, then its mirror image, so the
                # scrolling window never shows a seam where the two copies meet
                picture.putalpha(picture.getchannel("A").point(lambda v: v * 2 // 5))
                strip.alpha_composite(picture, (0, 0))
                mirrored = picture.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
                strip.alpha_composite(mirrored, (width, 0))
        self.strip = _Planes(2 * width, height).split(
            rgb_to_yuv420(np.asarray(strip.convert("RGB")))
        )
        self._prepare_caption(spec.text)
        self.counter_size = max(10, min(width, height) // 24)
        self.first = self._still(spec.inputs, _FIRST_FRAME_KEYS)
        self.last = self._still(spec.inputs, _LAST_FRAME_KEYS)
        source = _input(spec.inputs, _SOURCE_VIDEO_KEYS)
        self.source = _source_frames(source, width, height) if source else None
        self.source_last: np.ndarray | None = None
        self.source_ended_at: int | None = None

    def _prepare_caption(self, text: str) -> None:
        self.caption = None
        patch = drawing.caption(text, self.width, self.height, max_lines=2)
        if patch is None:
            return
        w, h = _even(patch.width), _even(patch.height)
        if w < 2 or h < 2:
            return
        patch = patch.crop((0, 0, w, h))
        x, y = drawing.caption_position(patch, self.width, self.height)
        self.caption_xy = (_even(x), _even(y))
        alpha = np.asarray(patch.getchannel("A"), dtype=np.uint16)
        # straight alpha over black, converted once to YUV; blended per frame as premultiplied
        rgb = np.asarray(patch.convert("RGB"))
        luma, cb, cr = _Planes(w, h).split(rgb_to_yuv420(rgb))
        half_alpha = alpha.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3)).astype(np.uint16)
        self.caption = (
            (luma.astype(np.uint16), alpha),
            (cb.astype(np.uint16), half_alpha),
            (cr.astype(np.uint16), half_alpha),
        )

    def _still(self, inputs: dict[str, str], keys: tuple[str, ...]) -> np.ndarray | None:
        path = _input(inputs, keys)
        picture = drawing.load_picture(path, self.width, self.height) if path else None
        return rgb_to_yuv420(np.asarray(picture.convert("RGB"))) if picture is not None else None

    def _background(self, index: int) -> np.ndarray:
        # ping-pong across the strip: continuous motion, never a jump back to the start
        travel = int(index * max(2, self.width // 90)) % (2 * self.width)
        shift = _even(min(travel, 2 * self.width - travel, self.width - 2))
        buffer = np.empty(self.planes.luma + 2 * self.planes.chroma, dtype=np.uint8)
        y, u, v = self.planes.split(buffer)
        sy, su, sv = self.strip
        y[:] = sy[:, shift : shift + self.width]
        half, cw = shift // 2, self.width // 2
        u[:] = su[:, half : half + cw]
        v[:] = sv[:, half : half + cw]
        return buffer

    def _overlay(self, buffer: np.ndarray, index: int) -> None:
        planes = self.planes.split(buffer)
        if self.caption is not None:
            x, y = self.caption_xy
            for plane, (values, alpha), scale in zip(planes, self.caption, (1, 2, 2), strict=True):
                px, py = x // scale, y // scale
                h, w = values.shape
                region = plane[py : py + h, px : px + w]
                h, w = region.shape
                a = alpha[:h, :w]
                mixed = values[:h, :w] * a + region.astype(np.uint16) * (255 - a)
                region[:] = (mixed // 255).astype(np.uint8)
        size = self.counter_size
        label = f"{index + 1}/{self.count}"
        pw = min(self.width, _even(size * len(label) * 2 // 3 + size))
        ph = min(self.height, _even(size + size // 2))
        patch = Image.new("L", (pw, ph), 0)
        ImageDraw.Draw(patch).text((size // 2, size // 5), label, font=drawing.font(size), fill=255)
        luma, cb, cr = planes
        luma[:ph, :pw] = 16 + (np.asarray(patch, dtype=np.uint16) * 219 // 255).astype(np.uint8)
        cb[: ph // 2, : pw // 2] = 128
        cr[: ph // 2, : pw // 2] = 128

    def frame(self, index: int, fps: int) -> np.ndarray:
        """Frame ``index`` as an (h * 3 / 2, w) yuv420p array, ready for the encoder."""
        fade_frames = max(1, round(_CROSSFADE_SECONDS * fps))
        picture = self._background(index)
        if self.source is not None and self.source_ended_at is None:
            nxt = next(self.source, None)
            if nxt is None:
                self.source_ended_at = index
            else:
                self.source_last = nxt
                picture = nxt
        if self.source_ended_at is not None and self.source_last is not None:
            since = index - self.source_ended_at
            picture = _blend(self.source_last, picture, (since + 1) / (fade_frames + 1))
        if self.first is not None and index < 2 * fade_frames:
            hold = index < fade_frames  # hold the first frame, then cross-fade away from it
            weight = 0.0 if hold else (index - fade_frames + 1) / (fade_frames + 1)
            picture = _blend(self.first, picture, weight)
        if self.last is not None and index >= self.count - 2 * fade_frames:
            remaining = self.count - 1 - index
            weight = (
                1.0
                if remaining < fade_frames
                else 1 - (remaining - fade_frames + 1) / (fade_frames + 1)
            )
            picture = _blend(picture, self.last, weight)
        shape = (self.height * 3 // 2, self.width)
        # the very first/last frames are the input images untouched (no caption, no counter)
        if (self.first is not None and index == 0) or (
            self.last is not None and index == self.count - 1
        ):
            return picture.reshape(shape)
        if not picture.flags.writeable or picture is self.first or picture is self.last:
            picture = picture.copy()
        self._overlay(picture, index)
        return picture.reshape(shape)


def soundtrack(duration_seconds: float, seed: int, rate: int = AUDIO_RATE) -> np.ndarray:
    """A soft sustained chord, stereo float32 of shape (2, samples), with gentle fades."""
    total = max(1, round(duration_seconds * rate))
    t = np.arange(total, dtype=np.float32) / rate
    root = 196.0 * 2 ** ((seed % 7) / 12)
    wave = np.zeros(total, dtype=np.float32)
    for ratio, amp in ((1.0, 0.5), (1.25, 0.3), (1.5, 0.3), (2.0, 0.15)):
        wave += amp * np.sin(2 * np.pi * root * ratio * t, dtype=np.float32)
    wave *= 0.22 * (0.85 + 0.15 * np.sin(2 * np.pi * 0.5 * t, dtype=np.float32))
    fade = min(total // 2, int(0.2 * rate))
    if fade:
        wave[:fade] *= np.linspace(0, 1, fade, dtype=np.float32)
        wave[total - fade :] *= np.linspace(1, 0, fade, dtype=np.float32)
    return np.stack([wave, wave * 0.9])


def input_soundtrack(path: str, duration_seconds: float) -> np.ndarray | None:
    """An input's audio as stereo float32 (2, samples) at AUDIO_RATE, cut or padded with
    silence to exactly ``duration_seconds``; None if the file has no readable audio."""
    import av

    total = max(1, round(duration_seconds * AUDIO_RATE))
    resampler = av.AudioResampler(format="fltp", layout="stereo", rate=AUDIO_RATE)
    chunks: list[np.ndarray] = []
    have = 0
    try:
        with av.open(path) as container:
            if not container.streams.audio:
                return None
            for frame in container.decode(container.streams.audio[0]):
                for converted in resampler.resample(frame):
                    chunks.append(converted.to_ndarray())
                    have += chunks[-1].shape[1]
                if have >= total:
                    break
            for converted in resampler.resample(None):
                chunks.append(converted.to_ndarray())
    except (av.FFmpegError, OSError, ValueError) as exc:
        log.warning("audio input %s is unreadable, using a tone: %s", os.path.basename(path), exc)
        return None
    if not chunks:
        return None
    samples = np.concatenate(chunks, axis=1)[:, :total].astype(np.float32)
    if samples.shape[1] < total:
        samples = np.pad(samples, ((0, 0), (0, total - samples.shape[1])))
    return np.ascontiguousarray(samples)


def _encode_audio(container, stream, samples: np.ndarray) -> None:
    import av

    total = samples.shape[1]
    for start in range(0, total, _AAC_FRAME):
        chunk = np.ascontiguousarray(samples[:, start : start + _AAC_FRAME])
        frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="stereo")
        frame.sample_rate = AUDIO_RATE
        frame.pts = start
        frame.time_base = Fraction(1, AUDIO_RATE)
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode(None):
        container.mux(packet)


def measure_mp4(path: str) -> tuple[int, int, float, int, bool]:
    """(width, height, duration of the video track, frame count, has audio) of a written MP4."""
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        frames = stream.frames
        if stream.duration is not None:
            duration = float(stream.duration * stream.time_base)
        else:
            duration = frames / float(stream.average_rate or 1)
        return (
            stream.codec_context.width,
            stream.codec_context.height,
            duration,
            frames,
            bool(container.streams.audio),
        )


def render_video(spec: OutputSpec, dest_path: str) -> RenderedOutput:
    import av

    width = int(spec.width or 1280)
    height = int(spec.height or 720)
    if width % 2 or height % 2 or width < 2 or height < 2:
        raise ValueError(f"H.264 yuv420p needs positive even sizes, got {width}x{height}")
    fps = int(spec.fps or 24)
    duration = float(spec.duration_seconds or 5.0)
    count = max(1, round(duration * fps))
    maker = _FrameMaker(spec, width, height, count)

    with atomic_destination(dest_path) as tmp_path:
        with av.open(tmp_path, "w", format="mp4", options={"movflags": "+faststart"}) as out:
            video = out.add_stream("libx264", rate=fps)
            video.width, video.height, video.pix_fmt = width, height, "yuv420p"
            video.codec_context.time_base = Fraction(1, fps)
            video.options = {"preset": "ultrafast", "crf": "26"}
            video.thread_count = 2
            audio = None
            if spec.with_audio:
                audio = out.add_stream("aac", rate=AUDIO_RATE, layout="stereo")
                audio.bit_rate = 128_000
            for index in range(count):
                frame = av.VideoFrame.from_ndarray(maker.frame(index, fps), format="yuv420p")
                frame.pts = index
                frame.time_base = Fraction(1, fps)
                for packet in video.encode(frame):
                    out.mux(packet)
            for packet in video.encode(None):
                out.mux(packet)
            if audio is not None:
                track = None
                audio_input = _input(spec.inputs, _AUDIO_KEYS)
                if audio_input:
                    track = input_soundtrack(audio_input, count / fps)
                if track is None:
                    track = soundtrack(count / fps, spec.seed)
                _encode_audio(out, audio, track)
        real_w, real_h, real_duration, _frames, _has_audio = measure_mp4(tmp_path)
    return RenderedOutput(
        content_type=spec.content_type,
        size_bytes=os.path.getsize(dest_path),
        width=real_w,
        height=real_h,
        duration_seconds=round(real_duration, 3),
    )
