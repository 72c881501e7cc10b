"""The driver's standard error keeps everything but PySpark's closed-socket worker tracebacks,
both as a line filter and through a real child process's file descriptor 2."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kquota.fleet.spark_stderr import filtered_stderr_for_children, without_worker_noise

ZIP = "/venv/site-packages/pyspark/python/lib/pyspark.zip/pyspark"
WORKER_NOISE = [
    "Traceback (most recent call last):\n",
    f'  File "{ZIP}/daemon.py", line 264, in manager\n',
    f'  File "{ZIP}/daemon.py", line 95, in worker\n',
    "BrokenPipeError: [Errno 32] Broken pipe\n",
]
# PySpark 4.2's worker, its job cancelled, often reads the end of the stream instead.
WORKER_EOF = [
    "Traceback (most recent call last):\n",
    f'  File "{ZIP}/daemon.py", line 262, in manager\n',
    f'  File "{ZIP}/worker.py", line 3642, in main\n',
    "    if read_int(infile) == SpecialLengths.END_OF_STREAM:\n",
    "       ^^^^^^^^^^^^^^^^\n",
    f'  File "{ZIP}/serializers.py", line 575, in read_int\n',
    "    raise EOFError\n",
    "EOFError\n",
]
WARNING = "26/11/23 15:20:55 WARN NativeCodeLoader: Unable to load native-hadoop library\n"


def _filtered(lines: list[str]) -> list[str]:
    return [b.decode() for b in without_worker_noise(line.encode() for line in lines)]


@pytest.mark.parametrize("noise", [WORKER_NOISE, WORKER_EOF], ids=["broken-pipe", "eof"])
def test_the_worker_traceback_goes_and_what_surrounds_it_stays(noise: list[str]) -> None:
    assert _filtered([WARNING, *noise, "error: the deadline ran out\n"]) == [
        WARNING,
        "error: the deadline ran out\n",
    ]


@pytest.mark.parametrize(
    "block",
    [
        # A real failure in PySpark's code: not a closed socket.
        [*WORKER_NOISE[:3], "ValueError: bad row\n"],
        # A closed socket in the user's own code is theirs to see.
        [*WORKER_NOISE[:2], '  File "/home/me/job.py", line 3, in f\n', WORKER_NOISE[3]],
        # A traceback cut off by the end of the stream.
        WORKER_NOISE[:3],
    ],
    ids=["other-error", "foreign-frame", "unfinished"],
)
def test_other_tracebacks_pass_whole(block: list[str]) -> None:
    assert _filtered([*block, WARNING]) == [*block, WARNING]
    assert _filtered(block) == block


def test_a_child_writing_to_fd_2_is_filtered_and_this_process_is_not(
    capfd: pytest.CaptureFixture[str],
) -> None:
    written = "".join([WARNING, *WORKER_NOISE, "after\n"])
    script = f"import sys; sys.stderr.write({written!r})"
    with filtered_stderr_for_children():
        child = subprocess.Popen([sys.executable, "-c", script])
    child.wait(timeout=30)
    sys.stderr.write("mine\n")
    sys.stderr.flush()
    err = ""
    for _ in range(100):  # the forwarding thread runs on its own: give it a moment
        err += capfd.readouterr().err
        if "after" in err:
            break
        time.sleep(0.05)
    assert sorted(err.splitlines()) == sorted([WARNING.strip(), "mine", "after"])
