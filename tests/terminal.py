"""A command run with its output on a pseudo-terminal, for tests of what kquota does on a
terminal (colour, the waiting indicator) that a pipe never shows."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path


def on_terminal(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdout_tty: bool = True,
    stderr_tty: bool = True,
    typed: str | None = None,
    timeout: float = 120,
) -> tuple[int, str, str]:
    """on_terminal runs ``cmd`` with standard output and standard error on one
    pseudo-terminal (``stdout_tty=False``: output discarded; ``stderr_tty=False``: errors
    piped) and returns its exit code, what the terminal got and the piped errors. ``typed``:
    standard input is the terminal too, and this is what the person types (the terminal
    keeps it until the command reads it, and echoes it where it was typed)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdin=subprocess.DEVNULL if typed is None else follower,
        stdout=follower if stdout_tty else subprocess.DEVNULL,
        stderr=follower if stderr_tty else subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    if typed is not None:
        os.write(leader, typed.encode())
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    code = proc.wait(timeout)
    os.close(leader)
    return code, seen.decode(errors="replace"), err
