"""A real Prometheus server (Debian's ``prometheus`` package) on loopback, for the usage tests.

It scrapes the given dev brokers' JMX exporters every second, each target labelled with its
cluster (``cluster``) and broker (``instance``, the exporter's address). Its data lives in a
temporary folder; the process gets PR_SET_PDEATHSIG so it dies with the test run even if
pytest is killed. Optionally it demands basic auth (``--web.config.file``), to prove kquota
sends the credentials it was given.

A missing ``prometheus`` binary fails the test that needs it (never a skip): CI installs
the package in ``.ci/run``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import shutil
import socket
import subprocess
import time
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from kquota.runtime.parentdeath import signal_on_parent_death

SCRAPE_INTERVAL = "1s"
_READY_TIMEOUT = 60.0


@dataclass(frozen=True)
class RunningPrometheus:
    url: str
    pid: int
    folder: Path

    def query(self, promql: str) -> list[Any]:
        """query is an instant query's result list (for bounded polling in tests)."""
        host, port = self.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request("GET", "/api/v1/query?" + urlencode({"query": promql}))
            data = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        assert data["status"] == "success", data
        result: list[Any] = data["data"]["result"]
        return result


def find_prometheus() -> str:
    found = shutil.which("prometheus")
    if found is None:
        pytest.fail(
            "Prometheus is required for the usage tests and is not installed: "
            "apt-get install prometheus (.ci/run does)",
            pytrace=False,
        )
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bcrypt(password: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # Python 3.11's; the only bcrypt at hand, for a throwaway test password

        return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH))


def _config(targets: Mapping[str, list[str]]) -> str:
    jobs = [
        {
            "job_name": "kafka",
            "scrape_interval": SCRAPE_INTERVAL,
            "scrape_timeout": SCRAPE_INTERVAL,
            "static_configs": [
                {"targets": addresses, "labels": {"cluster": cluster}}
                for cluster, addresses in targets.items()
            ],
        }
    ]
    # JSON is YAML: no YAML writer needed for a config of our own making.
    return json.dumps({"global": {"scrape_interval": SCRAPE_INTERVAL}, "scrape_configs": jobs})


@contextlib.contextmanager
def running_prometheus(
    folder: Path,
    targets: Mapping[str, list[str]],
    *,
    basic_auth: tuple[str, str] | None = None,
) -> Iterator[RunningPrometheus]:
    """running_prometheus runs a Prometheus scraping ``targets`` (cluster -> exporter
    addresses) until the block ends, and stops it."""
    binary = find_prometheus()
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "prometheus.yml"
    config.write_text(_config(targets))
    port = _free_port()
    args = [
        binary,
        f"--config.file={config}",
        f"--storage.tsdb.path={folder / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    if basic_auth is not None:
        web = folder / "web.yml"
        user, password = basic_auth
        web.write_text(json.dumps({"basic_auth_users": {user: _bcrypt(password)}}))
        args.append(f"--web.config.file={web}")
    log = folder / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=signal_on_parent_death,
        )
    try:
        _wait_ready(port, proc, log)
        yield RunningPrometheus(f"http://127.0.0.1:{port}", proc.pid, folder)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_ready(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited: {log.read_text(errors='replace')[-2000:]}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/-/ready")
            if conn.getresponse().status in (200, 401):
                return
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.2)
    raise RuntimeError(f"prometheus not ready in {_READY_TIMEOUT:.0f}s; see {log}")
