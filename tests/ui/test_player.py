"""The media player in real JupyterLab: real files play, and no bytes go into saved state."""

from __future__ import annotations

import base64
import json

from media_files import make_mp4, make_png, make_wav


def _wait_metadata(element) -> None:
    element.evaluate(
        """(el) => el.readyState >= 1 || new Promise((resolve, reject) => {
               el.addEventListener('loadedmetadata', resolve, {once: true});
               const fail = () => reject(new Error('media error ' + el.error?.code));
               el.addEventListener('error', fail, {once: true});
           })"""
    )


def _plays(element) -> bool:
    """play(), then wait until currentTime has advanced."""
    return element.evaluate(
        """async (el) => {
               el.muted = true;
               await el.play();
               const start = performance.now();
               while (el.currentTime <= 0.05 && performance.now() - start < 10000) {
                   await new Promise((r) => setTimeout(r, 50));
               }
               el.pause();
               return el.currentTime > 0.05;
           }"""
    )


def test_player_shows_video_image_and_audio_and_keeps_bytes_out_of_state(lab):
    root = lab.server.root
    make_mp4(root / "clip.mp4", seconds=2.0, width=320, height=240)
    make_png(root / "still.png", width=300, height=200)
    make_wav(root / "tone.wav", seconds=1.5)
    notebook = lab.open(
        "player.ipynb",
        [
            "from mediagen.widgets import MediaPlayer",
            "MediaPlayer('clip.mp4')",
            "MediaPlayer('still.png')",
            "MediaPlayer('tone.wav')",
        ],
    )
    notebook.run_all()

    video = notebook.output(1).locator("video")
    video.wait_for()
    assert video.get_attribute("controls") is not None
    assert video.get_attribute("aria-label") == "Video: clip.mp4"
    _wait_metadata(video)
    assert abs(video.evaluate("(el) => el.duration") - 2.0) < 0.1
    assert video.evaluate("(el) => [el.videoWidth, el.videoHeight]") == [320, 240]
    assert video.evaluate("(el) => el.src").startswith("blob:")
    assert _plays(video)

    image = notebook.output(2).locator("img")
    image.wait_for()
    image.evaluate(
        "(el) => (el.complete && el.naturalWidth)"
        " || new Promise((r) => el.addEventListener('load', r, {once: true}))"
    )
    assert image.evaluate("(el) => [el.naturalWidth, el.naturalHeight]") == [300, 200]
    assert image.get_attribute("alt") == "still.png"

    audio = notebook.output(3).locator("audio")
    audio.wait_for()
    _wait_metadata(audio)
    assert abs(audio.evaluate("(el) => el.duration") - 1.5) < 0.05
    assert _plays(audio)

    saved = notebook.save()
    state = saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    players = [
        m for m in state.values() if m["state"].get("_anywidget_id", "").endswith("MediaPlayer")
    ]
    assert len(players) == 3, "saved widget state should hold the three players"
    assert all("buffers" not in m for m in state.values())
    text = json.dumps(saved)
    for name in ("clip.mp4", "still.png", "tone.wav"):
        head = base64.b64encode((root / name).read_bytes()[:48]).decode()
        assert head not in text, f"{name} bytes were saved into the notebook"
