"""kquota.runtime.ending: a command's process ends with its status, its output and its atexit
handlers, without the interpreter's teardown; the ordinary way out where anything needs it.

Each case is a real Python process (the end of a process is what is tested). Whether the
teardown ran shows by an object whose finalizer prints when the interpreter frees it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PRELUDE = """
import atexit, sys, threading
from kquota.runtime.ending import end_process

class Torn:
    def __del__(self):
        print("torn down", flush=True)

kept = Torn()
atexit.register(print, "atexit ran")
"""


def _ending(body: str) -> subprocess.CompletedProcess[str]:
    code = PRELUDE + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (1, 1), (2, 2), (130, 130)])
def test_the_status_output_and_atexit_handlers_without_the_teardown(
    code: int | None, status: int
) -> None:
    done = _ending(f"print('x' * 200_000, end=''); end_process({code!r})")
    assert done.returncode == status
    assert done.stdout == "x" * 200_000 + "atexit ran\n", "buffered output flushed, once"
    assert "torn down" not in done.stdout


def test_the_phase_times_are_written_at_the_end(tmp_path: Path) -> None:
    times = tmp_path / "times.tsv"
    code = PRELUDE + textwrap.dedent("""
        from kquota.runtime import timings
        with timings.span("work"):
            pass
        end_process(0)
    """)
    env = {"KQUOTA_PHASE_TIMES": str(times), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert times.read_text().startswith("work\t")


def test_a_running_thread_is_waited_for_as_the_interpreter_does() -> None:
    done = _ending("""
        gate = threading.Event()
        def late():
            gate.wait()
            print("thread done", flush=True)
        threading.Thread(target=late).start()
        threading.Timer(0.05, gate.set).start()
        end_process(3)
    """)
    assert done.returncode == 3
    assert "thread done" in done.stdout and "torn down" in done.stdout


def test_a_status_that_is_not_a_number_is_printed_by_the_interpreter() -> None:
    done = _ending("end_process('error: stopped')")
    assert done.returncode == 1
    assert done.stderr == "error: stopped\n"
