"""Whether a process still runs, by its pid on this host."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """pid_alive: ``pid`` runs (a zombie, every thread exited and not yet reaped, counts as
    gone: it will never release or answer anything again)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(")")[-1].split()[0] != "Z":
                return True
        # The pid is the main thread's: it reads as a zombie once that thread ends, while the
        # process's other threads may still run (a JVM with an agent shutting down keeps its
        # ports for a moment longer). Only a leader left alone has exited.
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False
