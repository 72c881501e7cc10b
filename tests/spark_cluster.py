"""A standalone Spark cluster (one master, one worker) on loopback, from the pyspark package.

Started with pyspark's own ``bin/spark-class`` (``deploy.master.Master`` and
``deploy.worker.Worker``), bound to 127.0.0.1, all directories under one temporary folder,
each JVM with PR_SET_PDEATHSIG so it dies with the test run even if pytest is killed.

The executors run a Python without kquota: a fresh venv whose only packages are pyspark and
py4j (linked in through a ``.pth`` file), what pyspark's worker needs itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kquota.runtime.parentdeath import signal_on_parent_death

# The worker registers with the master within seconds; a loaded 2-core machine needs more.
_READY_TIMEOUT = 120.0


@dataclass(frozen=True)
class SparkCluster:
    master: str
    executor_python: str
    worker_cores: int
    worker_pid: int


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bare_python(folder: Path) -> str:
    """bare_python makes a venv that can import pyspark and py4j, and nothing of kquota's."""
    import py4j
    import pyspark

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    only = folder / "only-pyspark"
    only.mkdir()
    for module in (pyspark, py4j):
        package = Path(module.__file__ or "").parent
        (only / package.name).symlink_to(package)
    (site,) = (folder / "lib").glob("python3.*/site-packages")
    (site / "only-pyspark.pth").write_text(f"{only}\n")
    return str(folder / "bin" / "python")


def _spark_class(
    spark_home: Path, args: list[str], log: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(spark_home / "bin" / "spark-class"), *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=signal_on_parent_death,
        )


def _wait_for(log: Path, text: str, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    raise RuntimeError(f"the Spark {what} did not start:\n{tail}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def standalone_cluster(
    folder: Path, *, cores: int = 2, memory: str = "2g"
) -> Iterator[SparkCluster]:
    """standalone_cluster runs a master and one worker until the block ends."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    executor_python = bare_python(folder / "executor-venv")
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_WORKER_DIR": str(folder / "work"),
        "SPARK_LOCAL_DIRS": str(folder / "local"),
        "PYSPARK_PYTHON": executor_python,
    }
    # The worker must not find this test run's Python (which has kquota) by any name.
    env.pop("PYTHONPATH", None)
    venv = env.pop("VIRTUAL_ENV", None)
    path = [
        d for d in env.get("PATH", "").split(os.pathsep) if d != str(Path(sys.executable).parent)
    ]
    env["PATH"] = os.pathsep.join(d for d in path if not (venv and d.startswith(venv)))
    port = _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master_log, worker_log = folder / "master.log", folder / "worker.log"
    master = _spark_class(
        spark_home,
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
         "--webui-port", str(_free_port())],
        master_log,
        env,
    )  # fmt: skip
    worker = None
    try:
        _wait_for(master_log, "I have been elected leader", master, "master")
        worker = _spark_class(
            spark_home,
            ["org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
             "--cores", str(cores), "--memory", memory, "--webui-port", str(_free_port()),
             "--work-dir", str(folder / "work")],
            worker_log,
            env,
        )  # fmt: skip
        _wait_for(worker_log, "Successfully registered with master", worker, "worker")
        yield SparkCluster(master_url, executor_python, cores, worker.pid)
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)
