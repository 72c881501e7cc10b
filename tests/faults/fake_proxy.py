"""fake_proxy: a loopback TCP proxy in front of a real broker port that breaks on demand.

What it emulates (the faults a real broker cannot produce on demand):

- ``cut()``: every open connection is closed at once, both sides (the client reads EOF, as
  when a broker or a load balancer drops the connection);
- ``refuse_for(seconds)``: the listening socket is closed, so new connections are refused
  (ECONNREFUSED, as while a broker restarts), then it listens again on the same port;
- ``cut_after_bytes(n)``: armed once; forwards exactly ``n`` more client bytes, then cuts
  (a request torn in the middle: the broker never sees a whole frame);
- ``cut_at_frame(n, api_key=None, deliver=False)``: armed once; on the ``n``-th request frame
  from any client (optionally only frames of one API key), cuts *before* forwarding it
  (``deliver=False``: the broker never sees it) or forwards it and cuts when its response
  arrives, dropping the response (``deliver=True``: the broker did the work, the client
  never hears so: the "committed but unacknowledged" case).

What it does not emulate:

- It does not rewrite Metadata responses. Clients that follow advertised listeners after
  bootstrap (librdkafka, the Java client) connect to the broker directly and bypass the proxy;
  only clients that keep talking to the address they were given (kquota's QuotaAdmin against
  one broker, the devbroker probe) go through it for every request.
- Frames are found from the 4-byte size prefix of plaintext Kafka framing (PLAINTEXT and
  SASL_PLAINTEXT listeners); TLS traffic is not parsed, so frame faults do not apply to it.
- No latency, bandwidth limits, partial writes or reordering; no half-close (EOF from either
  side, like a cut, closes both directions). Each connection has one pump thread that forwards
  whole frames with blocking sends bounded at 5 s: a client that stops reading for longer is
  cut, where a real broker would keep the connection open.

Bounded: it listens on 127.0.0.1 only, every socket wait has a short timeout, and it stops by
itself after ``lifetime`` seconds (use it as a context manager; leaving it closes everything
and joins its threads).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from kquota.runtime.closing import ClosesOnExit

_POLL = 0.05
_CHUNK = 65536


def _parse_addr(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


class _Framer:
    """_Framer splits a byte stream into whole size-prefixed Kafka frames (prefix included)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        frames = []
        while len(self._buf) >= 4:
            (size,) = struct.unpack_from(">i", self._buf, 0)
            if size < 0 or len(self._buf) < 4 + size:
                break
            frames.append(bytes(self._buf[: 4 + size]))
            del self._buf[: 4 + size]
        return frames


def _request_ids(frame: bytes) -> tuple[int, int] | None:
    """(api_key, correlation_id) of a request frame, None if the header is too short."""
    if len(frame) < 4 + 8:
        return None
    api_key, _version, correlation_id = struct.unpack_from(">hhi", frame, 4)
    return api_key, correlation_id


def _response_correlation_id(frame: bytes) -> int | None:
    if len(frame) < 4 + 4:
        return None
    return int(struct.unpack_from(">i", frame, 4)[0])


@dataclass
class _Armed:
    """One pending one-shot fault."""

    kind: str  # "bytes" | "frame"
    remaining: int
    api_key: int | None = None
    deliver: bool = False


@dataclass
class ProxyStats:
    """ProxyStats counts what went through the proxy (for assertions in tests)."""

    accepted: int = 0
    cuts: int = 0
    bytes_to_broker: int = 0
    bytes_to_client: int = 0
    frames_by_api_key: Counter[int] = field(default_factory=Counter)


class _Conn:
    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.requests = _Framer()
        self.responses = _Framer()
        # Correlation id whose response must be dropped, followed by a cut (deliver=True).
        self.cut_on_response: int | None = None
        self.closed = threading.Event()

    def shutdown(self) -> None:
        # shutdown, not close: the pump thread owns the sockets and closes them; shutdown
        # wakes its select and sends FIN, so the client reads EOF right away.
        self.closed.set()
        for s in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


class FaultProxy(ClosesOnExit):
    """FaultProxy forwards 127.0.0.1:<port> to ``upstream`` ("host:port") until told to fail."""

    def __init__(self, upstream: str, *, lifetime: float = 300.0) -> None:
        self.upstream = _parse_addr(upstream)
        self.lifetime = lifetime
        self.stats = ProxyStats()
        self.fired = threading.Event()
        self._lock = threading.Lock()
        self._conns: set[_Conn] = set()
        self._threads: list[threading.Thread] = []
        self._armed: _Armed | None = None
        self._stop = threading.Event()
        self._refuse_until = 0.0
        self._refusing = threading.Event()
        self._listener: socket.socket | None = self._listen(0)
        self.host, self.port = self._listener.getsockname()[:2]
        self._deadline = time.monotonic() + lifetime
        self._acceptor = threading.Thread(target=self._accept_loop, name="fault-proxy", daemon=True)
        self._acceptor.start()

    # -- public ---------------------------------------------------------------------------

    @property
    def address(self) -> str:
        """address is "127.0.0.1:<port>", to use as bootstrap servers."""
        return f"{self.host}:{self.port}"

    def cut(self) -> int:
        """cut closes every open connection now; returns how many it closed."""
        with self._lock:
            conns = list(self._conns)
            self.stats.cuts += 1
        for conn in conns:
            conn.shutdown()
        return len(conns)

    def refuse_for(self, seconds: float) -> None:
        """refuse_for closes the listener so connects are refused, and reopens it later.

        Returns once the listener is closed: a connect right after it is refused.
        """
        self._refusing.clear()
        with self._lock:
            self._refuse_until = time.monotonic() + seconds
        if not self._refusing.wait(timeout=5):
            raise RuntimeError("the proxy did not close its listener")

    def cut_after_bytes(self, n: int) -> None:
        """cut_after_bytes arms a one-shot cut after ``n`` more client-to-broker bytes."""
        with self._lock:
            self._armed = _Armed("bytes", n)
            self.fired.clear()

    def cut_at_frame(self, n: int, *, api_key: int | None = None, deliver: bool = False) -> None:
        """cut_at_frame arms a one-shot cut at the ``n``-th request frame (of ``api_key``)."""
        if n < 1:
            raise ValueError("n counts frames from 1")
        with self._lock:
            self._armed = _Armed("frame", n, api_key=api_key, deliver=deliver)
            self.fired.clear()

    def disarm(self) -> None:
        with self._lock:
            self._armed = None

    def active_connections(self) -> int:
        with self._lock:
            return len(self._conns)

    def close(self) -> None:
        """close stops accepting, cuts every connection and joins the threads (bounded)."""
        self._stop.set()
        self._acceptor.join(timeout=5)
        self.cut()
        for t in list(self._threads):
            t.join(timeout=5)

    # -- internals ------------------------------------------------------------------------

    def _listen(self, port: int) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(64)
        s.settimeout(_POLL)
        return s

    def _accept_loop(self) -> None:
        # This thread alone owns the listening socket: closing it from another thread while
        # accept() waits on it is a race, so refuse_for and close only ask.
        listener = self._listener
        try:
            while not self._stop.is_set():
                if time.monotonic() > self._deadline:
                    # The bound: a forgotten proxy must not outlive its test by much. The
                    # listener closes before the cut, so a client that saw EOF is refused.
                    self._stop.set()
                    if listener is not None:
                        listener.close()
                        listener = None
                    self.cut()
                    return
                with self._lock:
                    refusing = time.monotonic() < self._refuse_until
                if refusing and listener is not None:
                    listener.close()
                    listener = None
                    self._refusing.set()
                elif not refusing and listener is None:
                    try:
                        listener = self._listen(self.port)
                    except OSError:
                        time.sleep(_POLL)
                        continue
                if listener is None:
                    self._refusing.set()
                    time.sleep(_POLL)
                    continue
                try:
                    client, _ = listener.accept()
                except (TimeoutError, OSError):
                    continue
                self._start_conn(client)
        finally:
            if listener is not None:
                listener.close()
            self._listener = None

    def _start_conn(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            client.close()
            return
        conn = _Conn(client, upstream)
        with self._lock:
            self._conns.add(conn)
            self.stats.accepted += 1
        t = threading.Thread(target=self._pump, args=(conn,), name="fault-proxy-conn", daemon=True)
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _pump(self, conn: _Conn) -> None:
        sel = selectors.DefaultSelector()
        try:
            conn.client.setblocking(False)
            conn.upstream.setblocking(False)
            sel.register(conn.client, selectors.EVENT_READ, "up")
            sel.register(conn.upstream, selectors.EVENT_READ, "down")
            while not conn.closed.is_set() and not self._stop.is_set():
                for key, _ in sel.select(timeout=_POLL):
                    sock: socket.socket = key.fileobj  # type: ignore[assignment]
                    try:
                        data = sock.recv(_CHUNK)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    if not data:
                        conn.shutdown()
                        break
                    if key.data == "up":
                        self._client_to_broker(conn, data)
                    else:
                        self._broker_to_client(conn, data)
                    if conn.closed.is_set():
                        break
        finally:
            conn.shutdown()
            sel.close()
            conn.client.close()
            conn.upstream.close()
            with self._lock:
                self._conns.discard(conn)

    def _send(self, sock: socket.socket, data: bytes) -> None:
        # The sockets are non-blocking for select; sendall needs blocking with a bound.
        sock.settimeout(5)
        try:
            sock.sendall(data)
        finally:
            sock.setblocking(False)

    def _fire(self) -> None:
        self._armed = None
        self.fired.set()

    def _client_to_broker(self, conn: _Conn, data: bytes) -> None:
        for frame in conn.requests.feed(data):
            ids = _request_ids(frame)
            cut_now = False
            with self._lock:
                if ids is not None:
                    self.stats.frames_by_api_key[ids[0]] += 1
                armed = self._armed
                if armed is not None and armed.kind == "bytes":
                    if len(frame) >= armed.remaining:
                        frame, cut_now = frame[: armed.remaining], True
                        self._fire()
                    else:
                        armed.remaining -= len(frame)
                elif (
                    armed is not None
                    and ids is not None
                    and (armed.api_key is None or armed.api_key == ids[0])
                ):
                    armed.remaining -= 1
                    if armed.remaining == 0:
                        self._fire()
                        if armed.deliver:
                            conn.cut_on_response = ids[1]
                        else:
                            frame, cut_now = b"", True
                self.stats.bytes_to_broker += len(frame)
            try:
                if frame:
                    self._send(conn.upstream, frame)
            except OSError:
                cut_now = True
            if cut_now:
                with self._lock:
                    self.stats.cuts += 1
                conn.shutdown()
                return

    def _broker_to_client(self, conn: _Conn, data: bytes) -> None:
        for frame in conn.responses.feed(data):
            if (
                conn.cut_on_response is not None
                and _response_correlation_id(frame) == conn.cut_on_response
            ):
                with self._lock:
                    self.stats.cuts += 1
                conn.shutdown()
                return
            with self._lock:
                self.stats.bytes_to_client += len(frame)
            try:
                self._send(conn.client, frame)
            except OSError:
                conn.shutdown()
                return
