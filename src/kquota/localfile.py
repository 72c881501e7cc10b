"""Reading one local file that a user, a colleague or a CI artifact handed to kquota.

Only a regular file is read, and at most a stated size: a FIFO named ``plan.json``, a device,
a socket or a symlink loop is an error naming the path, never a hang, and a log or a device
cannot exhaust memory. The file is opened non-blocking and checked again on the open
descriptor, so a path swapped for a FIFO between the two checks is refused too.

And writing one that kquota keeps beside a user's files (:func:`replace_file`): never through
a symlink or a file someone planted where it writes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

MiB = 1024 * 1024

READABLE = "a readable regular file"

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class UnreadableFile(Exception):
    """UnreadableFile says why a file was not read: ``what`` as a sentence of its own,
    ``reason`` to follow "cannot read FILE: ", and what is read (``allowed``)."""

    def __init__(self, what: str, allowed: str = READABLE) -> None:
        super().__init__(what)
        self.what = what
        self.reason = what.removeprefix("cannot read: ").removeprefix("not read: ")
        self.allowed = allowed

    def __str__(self) -> str:
        return f"{self.what}; allowed: {self.allowed}"

    def message(self, path: Path, what: str) -> str:
        """message is the one-line error for ``path``, read as ``what`` ("snapshot")."""
        return f"{path}: cannot read {what}: {self.reason}; allowed: {self.allowed}"


def read_regular(path: Path, *, limit: int, larger: str) -> bytes:
    """read_regular reads one regular file of at most ``limit`` bytes, or raises
    :class:`UnreadableFile` (``larger`` says what to do with a larger file)."""
    try:
        kind = not_regular(os.stat(path).st_mode)
        if kind is not None:
            raise UnreadableFile(f"not read: it is {kind}")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise UnreadableFile(os_problem(e)) from None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            kind = not_regular(st.st_mode)
            if kind is not None:
                raise UnreadableFile(f"not read: it is {kind}")
            data = f.read(limit + 1) if st.st_size <= limit else None
        except OSError as e:
            raise UnreadableFile(os_problem(e)) from None
    if data is None or len(data) > limit:
        size = f"{st.st_size} bytes" if data is None else "more than that"
        mib = f"{limit / MiB:g} MiB"
        raise UnreadableFile(
            f"file too large ({size}; the limit is {limit} bytes, {mib})",
            f"files up to {mib}: {larger}",
        )
    return data


def open_regular(path: Path, *, limit: int, larger: str) -> BinaryIO:
    """open_regular opens one regular file of at most ``limit`` bytes to be read as a stream
    (a file too large to hold, read a line at a time), or raises :class:`UnreadableFile`
    with :func:`read_regular`'s words; the caller closes it."""
    try:
        kind = not_regular(os.stat(path).st_mode)
        if kind is not None:
            raise UnreadableFile(f"not read: it is {kind}")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise UnreadableFile(os_problem(e)) from None
    f = os.fdopen(fd, "rb")
    try:
        st = os.fstat(fd)
        kind = not_regular(st.st_mode)
        if kind is not None:
            raise UnreadableFile(f"not read: it is {kind}")
    except OSError as e:
        f.close()
        raise UnreadableFile(os_problem(e)) from None
    except UnreadableFile:
        f.close()
        raise
    if st.st_size > limit:
        f.close()
        mib = f"{limit / MiB:g} MiB"
        raise UnreadableFile(
            f"file too large ({st.st_size} bytes; the limit is {limit} bytes, {mib})",
            f"files up to {mib}: {larger}",
        )
    return f


def read_text(path: Path, *, limit: int, larger: str) -> str:
    """read_text is :func:`read_regular` for a UTF-8 text file."""
    try:
        return read_regular(path, limit=limit, larger=larger).decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFile("it is not UTF-8 text", "a UTF-8 text file") from None


def not_regular(mode: int) -> str | None:
    """not_regular names the kind of a file that is not a regular file (None for one)."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def os_problem(e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "cannot read: a symlink loop (too many levels of symbolic links)"
    return f"cannot read: {e.strerror or e}"


def replace_file(path: Path, data: bytes) -> None:
    """replace_file makes ``path`` hold ``data``, whole or not at all: a new file (created
    0600, exclusively, so a symlink planted at a guessable temporary name is never
    followed) is renamed over ``path``, which replaces a symlink there instead of writing
    where it points. OSError as the system gives it."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)  # never leave a half-written temporary file behind
        raise
