"""Whether a process still runs, by its pid on this host."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """pid_alive: ``pid`` runs (a zombie, exited and not yet reaped, counts as gone: it will
    never release or answer anything again)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
