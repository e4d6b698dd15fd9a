"""What the content-credential tests share besides fixtures."""

from __future__ import annotations


def example(catalog, model: str, mode: str | None = None) -> dict:
    """The catalog's ready-to-send request of ``model`` (its first mode unless ``mode``)."""
    examples = catalog[model]["example_request"]
    return dict(examples[mode or next(iter(examples))])
