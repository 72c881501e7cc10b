"""FakeListener: a loopback socket server that counts connection attempts and hangs up.

Named fake because "how many times did kquota try to connect" is nothing a real broker
reports: every refusal that must happen before the first connection is counted against it.
"""

from __future__ import annotations

import socket
import threading


class FakeListener:
    """FakeListener accepts TCP connections on loopback, counts them and hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()
