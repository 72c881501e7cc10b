"""Where the last ``kquota dev-broker start`` put its broker, so ``status`` and ``stop`` find
it from any folder.

``start`` writes the broker directory's absolute path to one file in the per-user state
directory: ``$XDG_STATE_HOME/kquota/dev-broker`` (``~/.local/state/kquota/dev-broker`` when
``XDG_STATE_HOME`` is not set, as the XDG base directory specification says). It is a hint,
never a secret: the broker's credentials stay in its own directory. A record that is missing,
unreadable or not an absolute path is no record.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_NAME = "dev-broker"
_LIMIT = 64 * 1024  # a path; anything longer was not written by start


def state_dir() -> Path:
    """state_dir is kquota's per-user state directory (XDG base directory specification)."""
    xdg = os.environ.get("XDG_STATE_HOME")
    # The specification: a relative XDG_STATE_HOME is invalid and is ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "state"
    return base / "kquota"


def record_path() -> Path:
    return state_dir() / _NAME


def record_started(broker_dir: Path) -> None:
    """record_started notes ``broker_dir`` as the last started broker's directory; a state
    directory that cannot be written only loses the hint (``--dir`` still works)."""
    path = record_path()
    part = path.with_name(f".{_NAME}.{os.getpid()}")
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(str(broker_dir.resolve()) + "\n", encoding="utf-8")
        part.replace(path)  # a reader sees the old record or the new one, never half of one
    with contextlib.suppress(OSError):
        part.unlink(missing_ok=True)


def recorded_dir() -> Path | None:
    """recorded_dir is the directory the last ``start`` recorded, or None."""
    try:
        with record_path().open("rb") as f:
            data = f.read(_LIMIT + 1)
    except (OSError, ValueError):
        return None
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if len(data) > _LIMIT or not text or "\n" in text or "\x00" in text:
        return None
    path = Path(text)
    return path if path.is_absolute() else None
