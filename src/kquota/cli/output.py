"""Writing a command's output file: whole or not at all.

A reader (node_exporter's textfile collector, a reviewer's editor, git) must never see a
half-written file, so text goes to a temporary file beside the target and is renamed over
it. A path that is not a regular file (``/dev/stdout``, a FIFO) is written in place:
renaming over it would replace the device or pipe with a file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kquota.errors import KquotaError


def write_output(path: Path, text: str, *, overwrite: bool = True) -> None:
    """write_output writes ``text`` to ``path`` atomically; without ``overwrite`` an
    existing file is refused (checked at the rename itself: a file created meanwhile is
    refused too)."""
    try:
        if path.exists() and not path.is_file():
            with path.open("w", encoding="utf-8") as f:
                f.write(text)
            return
        if not overwrite and path.exists():
            raise KquotaError(f"{path}: already exists (--force replaces it)")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            if overwrite:
                os.replace(tmp, path)
            else:
                os.link(tmp, path)  # fails if the name exists, unlike a rename
                os.unlink(tmp)
        except FileExistsError:
            os.unlink(tmp)
            raise KquotaError(f"{path}: already exists (--force replaces it)") from None
        except BaseException:
            os.unlink(tmp)  # never leave a half-written temporary file behind
            raise
    except OSError as e:
        raise KquotaError(f"{path}: cannot write: {e.strerror or e}") from None
