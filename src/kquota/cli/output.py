"""Writing a command's output file: whole or not at all, never over an input, readable.

A reader (node_exporter's textfile collector, a reviewer's editor, git) must never see a
half-written file, so text goes to a temporary file beside the target and is renamed over
it. A path that is not a regular file (``/dev/stdout``, a FIFO) is written in place:
renaming over it would replace the device or pipe with a file.

The temporary file is created 0600 (``mkstemp``); the file it becomes gets the mode any new
file would (``0666`` less the umask) or, when it replaces one, that file's mode: a node
exporter running as another user must be able to read a drift textfile. Only a file that
holds secrets keeps 0600 (kquota writes none today; ``private=True`` is there for it).

An output is never one of the same command's inputs (:func:`refuse_inputs`): ``plan --out``
onto its own ``--snapshot`` would destroy the state it planned against. Files are compared by
device and inode, so a symlink or a second spelling of the path is caught too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from kquota.errors import KquotaError, UsageError

DESIRED_SUFFIXES = (".yaml", ".yml")
"""What the desired-state loader reads from a folder: an output there would become an input."""


def write_output(
    path: Path, text: str | bytes, *, overwrite: bool = True, private: bool = False
) -> None:
    """write_output writes ``text`` to ``path`` atomically; without ``overwrite`` an
    existing file is refused (checked at the rename itself: a file created meanwhile is
    refused too). ``private`` keeps the file 0600 (for a file that holds secrets)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        if path.exists() and not path.is_file():
            with path.open("wb") as f:
                f.write(data)
            return
        if not overwrite and path.exists():
            raise KquotaError(f"{path}: already exists (--force replaces it)")
        mode = 0o600 if private else _mode_for(path)
        import tempfile  # here: with shutil and random, 3 ms of every command's start

        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                os.fchmod(f.fileno(), mode)
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


def _mode_for(path: Path) -> int:
    """_mode_for: the replaced file's mode, else what ``open()`` would give a new file."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def current_umask() -> int:
    """current_umask reads the process umask (Linux: /proc, without changing it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it straight back
    os.umask(mask)
    return mask


def refuse_inputs(out: Path | None, inputs: Iterable[tuple[str, Path | None]]) -> None:
    """refuse_inputs raises a UsageError when ``out`` is one of ``inputs`` (label, path): the
    same file by device and inode, or a file an input folder's desired state would read.

    Call it before anything is read or any connection is made."""
    if out is None:
        return
    try:
        out_stat = out.stat()
    except OSError:
        return  # not there yet: it cannot be an input
    if not stat.S_ISREG(out_stat.st_mode):
        return  # /dev/stdout, a FIFO: written in place, never replaced
    for label, given in inputs:
        if given is None:
            continue
        try:
            in_stat = given.stat()
        except OSError:
            continue
        same = (in_stat.st_dev, in_stat.st_ino) == (out_stat.st_dev, out_stat.st_ino)
        inside = (
            stat.S_ISDIR(in_stat.st_mode)
            and out.suffix.lower() in DESIRED_SUFFIXES
            and _is_under(out, given)
        )
        if same or inside:
            what = "is" if same else "is a desired-state file in"
            raise UsageError(
                f"{out}: {what} this command's {label} ({given}); an output never replaces "
                "an input: choose another --out"
            )


def _is_under(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def refuse_existing(out: Path | None, force: bool, *, unless: str = "") -> None:
    """refuse_existing: an existing ``out`` is replaced only with ``--force`` (``unless``
    names the one kind of file that may be replaced without it, for the message)."""
    if out is None or force or not out.exists() or not out.is_file():
        return
    also = f" ({unless} is replaced without it)" if unless else ""
    raise UsageError(f"{out}: already exists; --force replaces it{also}")


def safe_file_stem(name: str, what: str = "cluster name") -> str:
    """safe_file_stem returns ``name`` when it can be one file name inside a folder, else
    raises: a cluster named ``../..`` or ``/etc/x`` must never form a path outside it."""
    if (
        name in ("", ".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or os.path.isabs(name)
        or len(name.encode("utf-8", "surrogateescape")) > 200
    ):
        raise UsageError(
            f"{what} {name!r} cannot be a file name: no '/', '\\', NUL, '.' or '..' "
            "alone, at most 200 bytes"
        )
    return name
