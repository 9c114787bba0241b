"""The generated blocks of the docs: a Markdown file marks a block with two HTML comments naming it and
the store it is generated from; these helpers find, rewrite and store them (used by the reproductions,
the cross-check, the live validation, the lossless matrix and the knob reference)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPRODUCE_SOURCE = "docs/reproduction/claims.json by `detailsim reproduce --update-docs`"


def _block(name: str, source: str = REPRODUCE_SOURCE) -> tuple[str, str]:
    return (f"<!-- generated:{name} from {source}; do not edit -->", f"<!-- end generated:{name} -->")


def render_block(text: str, name: str, body: str, path: str = "", source: str = REPRODUCE_SOURCE) -> str:
    begin, end = _block(name, source)
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{path or 'document'}: no generated:{name} markers (add the two lines {begin!r} and {end!r})")
    return text[: i + len(begin)] + "\n" + body + "\n" + text[j:]


def write_generated(root: Path, doc: str, doc_json: str, name: str, data: Any, body: str, source: str) -> None:
    """Store `data` as `doc_json` and put `body` in `doc`'s generated block `name` (both under `root`)."""
    (root / doc_json).parent.mkdir(parents=True, exist_ok=True)
    (root / doc_json).write_text(json.dumps(data, indent=1) + "\n")
    (root / doc).write_text(render_block((root / doc).read_text(), name, body, doc, source=source))


def block_of(text: str, name: str, source: str = REPRODUCE_SOURCE) -> str | None:
    begin, end = _block(name, source)
    i, j = text.find(begin), text.find(end)
    return None if i < 0 or j < i else text[i + len(begin): j].strip("\n")
