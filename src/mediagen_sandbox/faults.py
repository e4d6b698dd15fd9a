"""Fault markers in prompts, random failures, and the simulated latency of a job.

Markers (anywhere in ``prompt``, ``text`` or a segment's text):
``[[fail:CODE]]`` fails the generation with GenerationError ``CODE`` (one of the nine),
``[[slow:SECONDS]]`` adds that much latency (not scaled by the speed factor), and
``[[drop]]`` makes the server commit the submit and then drop the connection.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .config import GENERATION_ERROR_CODES

_MARKER = re.compile(r"\[\[(fail|slow|drop)(?::([^\]]*))?\]\]")

FAILURE_MESSAGES = {
    "rate_limited": "The provider rate-limited this generation; submit it again later.",
    "timeout": "The generation did not finish in time at the provider.",
    "safety": "The request was blocked by the provider's safety filter.",
    "invalid_voice": "The requested voice is not available for this model.",
    "invalid_request": "The provider rejected the request as invalid.",
    "billing_or_access": "The provider refused the request for billing or access reasons.",
    "provider_auth": "The service's credentials were rejected by the provider.",
    "provider_unavailable": "The provider is temporarily unavailable.",
    "provider_error": "The provider failed while generating.",
}

# Typical seconds before a job of each kind starts rendering, at speed 1.
LATENCY_RANGES = {"image": (3.0, 8.0), "video": (20.0, 60.0), "audio": (4.0, 6.0)}


class MarkerError(ValueError):
    """A malformed marker; ``field`` names the body field it was found in."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class Markers:
    fail_code: str | None = None
    slow_seconds: float = 0.0
    drop: bool = False


def marker_texts(params: dict) -> list[tuple[str, str]]:
    """The (field, text) pairs markers are read from."""
    out = [(name, params[name]) for name in ("prompt", "text") if isinstance(params.get(name), str)]
    for segment in params.get("segments") or ():
        if isinstance(segment, dict) and isinstance(segment.get("text"), str):
            out.append(("segments", segment["text"]))
    return out


def parse_markers(params: dict) -> Markers:
    found = Markers()
    for field, text in marker_texts(params):
        if "[[" not in text:
            continue
        for match in _MARKER.finditer(text):
            kind, arg = match.group(1), (match.group(2) or "").strip()
            if kind == "fail":
                if arg not in GENERATION_ERROR_CODES:
                    raise MarkerError(
                        field,
                        f"unknown fault code {arg!r} in [[fail:...]]; "
                        f"use one of {', '.join(GENERATION_ERROR_CODES)}",
                    )
                found.fail_code = arg
            elif kind == "slow":
                try:
                    seconds = float(arg)
                except ValueError:
                    raise MarkerError(field, "[[slow:N]] needs a number of seconds") from None
                if not 0 <= seconds <= 86400:
                    raise MarkerError(field, "[[slow:N]] needs 0 <= N <= 86400")
                found.slow_seconds += seconds
            else:
                found.drop = True
    return found


def job_latency(kind: str, speed: float, markers: Markers, rng: random.Random) -> float:
    low, high = LATENCY_RANGES[kind]
    return rng.uniform(low, high) * max(speed, 0.0) + markers.slow_seconds


def planned_failure(
    markers: Markers,
    catalog_failure: tuple[str, str] | None,
    model_id: str,
    failure_rates: dict[str, float],
    failure_code: str,
    rng: random.Random,
) -> tuple[str, str] | None:
    if markers.fail_code:
        code = markers.fail_code
        return code, FAILURE_MESSAGES[code] + " (requested by a [[fail]] marker)"
    if catalog_failure:
        return catalog_failure
    rate = failure_rates.get(model_id, 0.0)
    if rate > 0 and rng.random() < rate:
        return failure_code, FAILURE_MESSAGES[failure_code] + " (random sandbox fault)"
    return None
