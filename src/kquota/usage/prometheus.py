"""Read the brokers' quota metrics from a Prometheus server's HTTP API (``query_range``).

The series are the ones the JMX exporter publishes with kquota's rules
(:mod:`kquota.usage.exposition`); each value becomes a :class:`~kquota.usage.rows.Sample`,
its broker the series' ``instance`` label (or another label the scrape config sets).

A Prometheus server is hostile input like any file: the answer is bounded in time (the
command's deadline and ``timeout``), in series (counted first, refused above
``max_series``) and in bytes, and every value is checked. Credentials come from environment
variables named by the caller, or from the URL's ``user:password@``; no message shows them,
nor the URL's credentials. Redirects are not followed (a token must not travel to a host
nobody named).
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from kquota.display import safe_text
from kquota.errors import KquotaError, UsageError
from kquota.runtime import deadline
from kquota.usage.exposition import (
    SELECTOR,
    ExpositionError,
    exposition_value,
    series_identity,
)
from kquota.usage.rows import Sample

MAX_SERIES = 100_000
"""Series one read may return (about 6 metrics for 15,000 principals on one broker)."""
MAX_BYTES = 1 << 30
"""Bytes one answer may hold: a 7-day read of MAX_SERIES series at a 5-minute step is well
under this."""
MAX_POINTS = 11_000
"""Prometheus refuses a range query of more points per series than this."""
_CHUNK = 1 << 16


class PrometheusError(KquotaError):
    """PrometheusError: the Prometheus server could not be read, or its answer is not usable;
    the message names the server (without credentials) and what went wrong."""


@dataclass(frozen=True)
class PrometheusServer:
    """PrometheusServer is where to read and how to authenticate; ``shown`` is the URL as
    messages may print it."""

    scheme: str
    host: str
    port: int | None
    path: str
    authorization: str | None
    shown: str

    @classmethod
    def parse(
        cls,
        url: str,
        *,
        token_env: str | None = None,
        basic_auth_env: str | None = None,
        env: Mapping[str, str] | None = None,
        option: str = "--prometheus",
    ) -> PrometheusServer:
        """parse checks the URL and builds the Authorization header: a bearer token from the
        variable ``token_env`` names, else ``user:password`` from ``basic_auth_env``, else
        the URL's own credentials. ``option`` is the flag messages name."""
        env = os.environ if env is None else env
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise UsageError(
                f"{option}: not a URL kquota can read; give http(s)://host[:port][/path]"
            ) from None
        shown = _shown(parts.scheme, parts.hostname, port, parts.path)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"{option} {shown}: give an http:// or https:// URL with a host")
        if parts.query or parts.fragment:
            raise UsageError(f"{option} {shown}: the URL must have no ?query or #fragment")
        if token_env and basic_auth_env:
            raise UsageError("give a bearer token or basic auth for Prometheus, not both")
        authorization = None
        if token_env:
            authorization = "Bearer " + _from_env(env, token_env, "a bearer token")
        elif basic_auth_env:
            pair = _from_env(env, basic_auth_env, "user:password")
            if ":" not in pair:
                raise UsageError(
                    f"${basic_auth_env} must hold user:password (its value is not shown)"
                )
            authorization = "Basic " + base64.b64encode(pair.encode()).decode()
        elif parts.username is not None:
            pair = f"{_unquote(parts.username)}:{_unquote(parts.password or '')}"
            authorization = "Basic " + base64.b64encode(pair.encode()).decode()
        if authorization is not None and any(c in authorization for c in "\r\n\0"):
            raise UsageError("the Prometheus credentials hold a line break (not shown)")
        return cls(
            parts.scheme,
            parts.hostname,
            port,
            parts.path.rstrip("/"),
            authorization,
            shown,
        )


def _unquote(text: str) -> str:
    from urllib.parse import unquote

    return unquote(text)


def _shown(scheme: str, host: str | None, port: int | None, path: str) -> str:
    netloc = (f"[{host}]" if host and ":" in host else host or "") + (f":{port}" if port else "")
    return safe_text(urlunsplit((scheme, netloc, path, "", "")))


def _from_env(env: Mapping[str, str], name: str, what: str) -> str:
    value = env.get(name, "")
    if not value:
        raise UsageError(f"${name} is not set or empty; it must hold {what} for Prometheus")
    return value


def prometheus_samples(
    url: str,
    cluster: str,
    *,
    start: float,
    end: float,
    step: float | None = None,
    selector: str = "",
    broker_label: str = "instance",
    token_env: str | None = None,
    basic_auth_env: str | None = None,
    timeout: float = 60.0,
    max_series: int = MAX_SERIES,
    env: Mapping[str, str] | None = None,
    cluster_label: str | None = None,
) -> Iterator[Sample]:
    """prometheus_samples yields every quota sample the server holds from ``start`` to
    ``end`` (seconds since the epoch) at ``step`` seconds, as rows of ``cluster``.

    ``cluster_label``: a series' label naming its cluster, which then names the rows'
    cluster instead of ``cluster``. ``step`` defaults to :func:`default_step`. ``selector``
    adds PromQL label matchers (``job="kafka",env="prod"``) to the quota series' own. A
    throttle time of NaN is the broker's "no throttle in the window" (its average over no
    samples) and reads as 0; any other NaN, an infinity or a negative value is refused.
    """
    server = PrometheusServer.parse(
        url, token_env=token_env, basic_auth_env=basic_auth_env, env=env
    )
    if not (math.isfinite(start) and math.isfinite(end)) or end <= start:
        raise UsageError("the time range must end after it starts")
    if step is None:
        step = default_step(start, end)
    if not math.isfinite(step) or step <= 0:
        raise UsageError("the step must be a positive number of seconds")
    points = int((end - start) // step) + 1
    if points > MAX_POINTS:
        raise UsageError(
            f"{points:,} points per series from {step:g}s steps over {end - start:g}s; "
            f"Prometheus answers at most {MAX_POINTS:,}: use a step of at least "
            f"{math.ceil((end - start) / (MAX_POINTS - 1))}s"
        )
    query = _query(selector)
    bound = time.monotonic() + timeout
    window = max(1, math.ceil(end - start))
    counted = _get(
        server,
        "/api/v1/query",
        {"query": f"count(last_over_time({query}[{window}s]))", "time": _ts(end)},
        bound,
    )
    found = _count(server, counted)
    if found > max_series:
        raise PrometheusError(
            f"Prometheus at {server.shown} holds {found:,} quota series in the range; kquota "
            f"reads at most {max_series:,} at once: narrow the selector (a cluster's or a "
            "broker's labels) or the time range"
        )
    answer = _get(
        server,
        "/api/v1/query_range",
        {"query": query, "start": _ts(start), "end": _ts(end), "step": f"{step:g}"},
        bound,
    )
    result = _matrix(server, answer)
    if len(result) > max_series:
        raise PrometheusError(
            f"Prometheus at {server.shown} answered {len(result):,} quota series; kquota "
            f"reads at most {max_series:,} at once: narrow the selector or the time range"
        )
    for series in result:
        labels = series.get("metric") if isinstance(series, dict) else None
        named = labels.get(cluster_label) if cluster_label and isinstance(labels, dict) else None
        own = named if isinstance(named, str) and named else cluster
        yield from _series_samples(server, own, broker_label, series)


def default_step(start: float, end: float) -> float:
    """default_step is 15 s (a common scrape interval, and the quota window's scale), longer
    where the range would pass Prometheus's points per series: 7 days read at 55 s."""
    return float(max(15, math.ceil((end - start) / (MAX_POINTS - 1))))


def _query(selector: str) -> str:
    if not selector.strip():
        return SELECTOR
    if "{" in selector or "}" in selector:
        raise UsageError(
            'the selector is label matchers only, as inside {...}: job="kafka",env="prod"'
        )
    return SELECTOR[:-1] + "," + selector + "}"


def _ts(seconds: float) -> str:
    return f"{seconds:.3f}"


def _get(server: PrometheusServer, api: str, params: dict[str, str], bound: float) -> Any:
    """_get fetches one API answer, bounded by ``bound`` (monotonic) and the deadline."""
    limit = bound
    current = deadline.current()
    if current is not None:
        limit = min(limit, current.at)
    connection_class = (
        http.client.HTTPSConnection if server.scheme == "https" else http.client.HTTPConnection
    )
    remaining = limit - time.monotonic()
    if remaining <= 0:
        raise _timed_out(server)
    conn = connection_class(server.host, server.port, timeout=remaining)
    headers = {"Accept": "application/json", "User-Agent": "kquota"}
    if server.authorization is not None:
        headers["Authorization"] = server.authorization
    try:
        # A wait with a name: the deadline's message and the terminal's indicator say whom
        # the command waits on (the URL without its credentials).
        with deadline.waiting_on(f"Prometheus at {server.shown}"):
            conn.request("GET", server.path + api + "?" + urlencode(params), headers=headers)
            response = conn.getresponse()
            body = _read_bounded(server, response, limit)
    except TimeoutError:
        raise _timed_out(server) from None
    except (OSError, http.client.HTTPException) as e:
        reason = safe_text(str(getattr(e, "strerror", None) or e.__class__.__name__))
        raise PrometheusError(f"cannot reach Prometheus at {server.shown}: {reason}") from None
    finally:
        conn.close()
    if 300 <= response.status < 400:
        raise PrometheusError(
            f"Prometheus at {server.shown} answered {response.status} (a redirect); kquota "
            "follows none: give the URL it redirects to"
        )
    if response.status in (401, 403):
        raise PrometheusError(
            f"Prometheus at {server.shown} refused the request ({response.status}): check the "
            "credentials (bearer token or basic auth) kquota was given"
        )
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise PrometheusError(
            f"Prometheus at {server.shown} answered {response.status} with no JSON "
            "(is it a Prometheus server's URL?)"
        ) from None
    if not isinstance(data, dict) or data.get("status") != "success":
        error = data.get("error") if isinstance(data, dict) else None
        detail = safe_text(str(error))[:500] if error else f"HTTP {response.status}"
        raise PrometheusError(f"Prometheus at {server.shown} refused the query: {detail}")
    return data.get("data")


def _read_bounded(
    server: PrometheusServer, response: http.client.HTTPResponse, limit: float
) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > limit:
            raise _timed_out(server)
        chunk = response.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BYTES:
            raise PrometheusError(
                f"Prometheus at {server.shown} answered more than {MAX_BYTES:,} bytes; narrow "
                "the selector or the time range, or use a longer step"
            )
        chunks.append(chunk)


def _timed_out(server: PrometheusServer) -> KquotaError:
    current = deadline.current()
    if current is not None and current.expired:
        return current.exceeded()
    return PrometheusError(f"Prometheus at {server.shown} did not answer in time")


def _count(server: PrometheusServer, data: Any) -> int:
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise _shape(server, "the series count is not a vector")
    result = data.get("result")
    if not isinstance(result, list):
        raise _shape(server, "the series count has no result list")
    if not result:
        return 0
    value = result[0].get("value") if isinstance(result[0], dict) else None
    try:
        found = float(value[1]) if isinstance(value, list) and len(value) == 2 else math.nan
    except (TypeError, ValueError):
        found = math.nan
    if not math.isfinite(found) or found < 0:
        raise _shape(server, "the series count is not a count")
    return int(found)


def _matrix(server: PrometheusServer, data: Any) -> list[Any]:
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        raise _shape(server, "a range query's answer is not a matrix")
    result = data.get("result")
    if not isinstance(result, list):
        raise _shape(server, "a range query's answer has no result list")
    return result


def _shape(server: PrometheusServer, what: str) -> PrometheusError:
    return PrometheusError(f"Prometheus at {server.shown} answered oddly: {what}")


def _series_samples(
    server: PrometheusServer, cluster: str, broker_label: str, series: Any
) -> Iterator[Sample]:
    labels = series.get("metric") if isinstance(series, dict) else None
    values = series.get("values") if isinstance(series, dict) else None
    if not isinstance(labels, dict) or not isinstance(values, list):
        raise _shape(server, "a series without labels or values")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise _shape(server, "a series' labels are not text")
    name = labels.get("__name__", "")
    try:
        identity = series_identity(name, labels)
    except ExpositionError as e:
        raise PrometheusError(f"Prometheus at {server.shown}: {e}") from None
    if identity is None:
        return
    broker = labels.get(broker_label, "")
    if not broker:
        raise PrometheusError(
            f"Prometheus at {server.shown}: a series of {safe_text(name)} has no "
            f"{safe_text(broker_label)} label to name its broker by (set the broker label, "
            "or label the scrape targets)"
        )
    for point in values:
        if not (isinstance(point, list) and len(point) == 2 and isinstance(point[1], str)):
            raise _shape(server, f"a point of {safe_text(name)} is not [time, value]")
        at, text = point
        if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at):
            raise _shape(server, f"a point of {safe_text(name)} has no time")
        try:
            value = float(text)
        except ValueError:
            raise _shape(server, f"a value of {safe_text(name)} is not a number") from None
        value = exposition_value(identity.metric, value)
        if not math.isfinite(value) or value < 0:
            raise PrometheusError(
                f"Prometheus at {server.shown}: {safe_text(name)} of "
                f"{_who(identity.user, identity.client_id)} on {safe_text(broker)} is "
                f"{safe_text(text)} at {at:.3f} (a quota metric is a finite number, 0 or "
                "more)"
            )
        yield Sample(
            cluster=cluster,
            broker=broker,
            user=identity.user,
            client_id=identity.client_id,
            metric=identity.metric,
            timestamp_ms=round(at * 1000),
            value=value,
        )


def _who(user: str | None, client_id: str | None) -> str:
    parts = []
    if user is not None:
        parts.append(f"user={safe_text(user)}")
    if client_id is not None:
        parts.append(f"client-id={safe_text(client_id)}")
    return "{" + ", ".join(parts) + "}"


class PrometheusSamples:
    """PrometheusSamples is a Prometheus server as ``kquota usage --prometheus`` reads it:
    the last ``since_ms`` up to now, of ``cluster`` (series whose ``cluster`` label is that
    name, or that have none). With no cluster named, the rows take their series' ``cluster``
    label (else the server's address), and series of two clusters are refused."""

    def __init__(
        self,
        url: str,
        cluster: str | None,
        *,
        since_ms: int,
        token_env: str | None = None,
        basic_auth_env: str | None = None,
        option: str = "--prometheus",
    ) -> None:
        self.url = url
        self.cluster = cluster
        self.since_ms = since_ms
        self.token_env = token_env
        self.basic_auth_env = basic_auth_env
        # Checked now: a bad URL or a missing variable is refused before anything is read.
        self.server = PrometheusServer.parse(
            url, token_env=token_env, basic_auth_env=basic_auth_env, option=option
        )

    def where(self) -> str:
        return f"Prometheus at {self.server.shown}"

    def __iter__(self) -> Iterator[Sample]:
        end = time.time()
        start = end - self.since_ms / 1000
        selector = "" if self.cluster is None else f'cluster=~"{_promql_regex(self.cluster)}|"'
        rows = prometheus_samples(
            self.url,
            self.cluster or "",
            start=start,
            end=end,
            selector=selector,
            token_env=self.token_env,
            basic_auth_env=self.basic_auth_env,
            timeout=_command_timeout(),
            cluster_label=None if self.cluster is not None else "cluster",
        )
        seen: str | None = None
        for row in rows:
            if self.cluster is None:
                name = row.cluster or f"{self.server.host}:{self.server.port or ''}".rstrip(":")
                if seen is not None and name != seen:
                    raise PrometheusError(
                        f"{self.where()} holds series of clusters {safe_text(seen)!r} and "
                        f"{safe_text(name)!r}: name the cluster (--cluster) to read one"
                    )
                seen = name
                row = replace(row, cluster=name)
            yield row


def _promql_regex(name: str) -> str:
    """_promql_regex is ``name`` matched literally by a PromQL regex, inside a double-quoted
    PromQL string."""
    literal = "".join(
        "\\" + c if c.isascii() and not (c.isalnum() or c == "_") else c for c in name
    )
    return literal.replace("\\", "\\\\").replace('"', '\\"')


def _command_timeout() -> float:
    current = deadline.current()
    return 60.0 if current is None else max(current.remaining(), 0.001)
