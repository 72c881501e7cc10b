"""A process asks Linux to signal it when its parent dies (``prctl(PR_SET_PDEATHSIG)``): the
dev broker's JVMs and a fleet rollout's per-cluster applies never outlive what started them."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1


def signal_on_parent_death(sig: int = signal.SIGKILL) -> None:
    """signal_on_parent_death: ``sig`` to this process when its parent dies (Linux; elsewhere
    nothing). Run it in the child, e.g. as a ``preexec_fn``; a parent gone before it ran is
    the caller's to check (``os.getppid()``)."""
    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)
