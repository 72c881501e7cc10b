"""Where kquota.yaml is looked for: apart from :mod:`kquota.config.project` (pydantic models), so a
command run without a kquota.yaml never imports pydantic (about 0.4 s of start-up)."""

from __future__ import annotations

from pathlib import Path

CONFIG_FILENAME = "kquota.yaml"


def find_config(start: Path | None = None) -> Path | None:
    """find_config returns ./kquota.yaml if it exists (no walking up: explicit is better)."""
    candidate = (start or Path.cwd()) / CONFIG_FILENAME
    return candidate if candidate.is_file() else None
