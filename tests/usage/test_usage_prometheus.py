"""kquota.usage.prometheus against a real broker (``--metrics``) and a real Prometheus scraping it.

Also the facts docs/usage.md states about the quota sensors (Kafka 4.3.1, JMX exporter
1.0.1, Prometheus 2.42), each confirmed here by bounded polling, never by a timed sleep.
Load is bounded: a few principals, tens of KB/s, seconds.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import KafkaConfigsTool
from kquota.devbroker.probe import metrics_ok
from kquota.usage.prometheus import PrometheusError, prometheus_samples
from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, REQUEST_TIME, Sample
from polling import assert_eventually
from prometheus_server import running_prometheus
from usage_load import MeteredBroker as Live
from usage_load import metered_broker, produce, produce_together

pytestmark = pytest.mark.integration

USERS = {"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
POLL = 90.0  # seconds: scrapes every 1 s, but a loaded 2-core machine lags


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    folder = tmp_path_factory.mktemp("usage-live")
    with metered_broker(folder, USERS) as live:
        yield live


def exported(live: Live) -> str:
    import http.client

    assert live.broker.metrics_address is not None
    host, port = live.broker.metrics_address.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", "/metrics")
        return conn.getresponse().read().decode()
    finally:
        conn.close()


def quota_lines(text: str, client_id: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if line.startswith("kafka_server_quota_") and f'client_id="{client_id}"' in line
    ]


def samples(live: Live, since: float, **kwargs: object) -> list[Sample]:
    return list(
        prometheus_samples(
            live.prometheus.url,
            "dev",
            start=since,
            end=time.time(),
            step=1,
            **kwargs,  # type: ignore[arg-type]
        )
    )


def set_quota(live: Live, entity: list[str], config: str) -> None:
    KafkaConfigsTool(live.broker)("--alter", *entity, "--add-config", config)


def delete_quota(live: Live, entity: list[str], key: str) -> None:
    KafkaConfigsTool(live.broker)("--alter", *entity, "--delete-config", key)


DEFAULT_CLIENT = ["--entity-type", "clients", "--entity-default"]


def test_01_no_quota_anywhere_no_per_client_metric(live: Live) -> None:
    """Fact: with no produce quota set anywhere, the broker keeps no per-client produce
    sensor, so there is nothing to export (usage is invisible until a quota exists)."""
    produce(live.broker, "alice", "fact-none", 20_000, 2)
    assert metrics_ok(*_host_port(live))
    assert quota_lines(exported(live), "fact-none") == []


def test_02_observation_quota_tags_client_id_only(live: Live) -> None:
    """Fact: ``{client-id=<default>} producer_byte_rate=1e12`` throttles nobody and makes a
    sensor for every client, tagged client_id only (the matched level has no user)."""
    set_quota(live, DEFAULT_CLIENT, "producer_byte_rate=1e12")
    try:
        produce(live.broker, "alice", "fact-observe", 20_000, 2)
        text = exported(live)
        lines = quota_lines(text, "fact-observe")
        rate = [x for x in lines if x.startswith("kafka_server_quota_byte_rate{")]
        assert len(rate) == 1, lines
        assert 'type="Produce"' in rate[0] and "user=" not in rate[0]
        throttle = [x for x in lines if x.startswith("kafka_server_quota_throttle_time{")]
        # Never throttled: the sensor's average over no samples, which the exporter shows as is.
        assert len(throttle) == 1 and throttle[0].endswith(" NaN"), lines
    finally:
        delete_quota(live, DEFAULT_CLIENT, "producer_byte_rate")


def test_02b_client_id_level_tags_client_id_only(live: Live) -> None:
    """Fact: a named client-id level tags client_id only, even for an authenticated user."""
    entity = ["--entity-type", "clients", "--entity-name", "fact-cid"]
    set_quota(live, entity, "producer_byte_rate=1e12")
    try:
        produce(live.broker, "carol", "fact-cid", 20_000, 2)
        rate = [
            x
            for x in quota_lines(exported(live), "fact-cid")
            if x.startswith("kafka_server_quota_byte_rate{")
        ]
        assert len(rate) == 1 and "user=" not in rate[0], rate
    finally:
        delete_quota(live, entity, "producer_byte_rate")


def test_02c_request_time_and_quoted_client_ids(live: Live) -> None:
    """Fact: an observation ``request_percentage`` makes the Request sensors (request-time
    and its throttle time); a client-id with characters an MBean name reserves arrives
    JMX-quoted, and the rows name it as the client sent it."""
    odd = 'odd,id=1 "q"'
    set_quota(live, DEFAULT_CLIENT, "request_percentage=100000")
    since = time.time()
    try:
        produce(live.broker, "alice", odd, 20_000, 2)
        text = exported(live)
        quoted = 'client_id="\\"odd,id=1 \\\\\\"q\\\\\\"\\""'
        request = [x for x in text.splitlines() if x.startswith("kafka_server_quota_request_time{")]
        assert any(quoted in x and 'type="Request"' in x for x in request), request
        assert any(
            x.startswith("kafka_server_quota_throttle_time{") and 'type="Request"' in x
            for x in text.splitlines()
        )
    finally:
        delete_quota(live, DEFAULT_CLIENT, "request_percentage")

    def rows() -> list[Sample]:
        return [s for s in samples(live, since) if s.metric == REQUEST_TIME]

    assert_eventually(
        lambda: any(s.client_id == odd for s in rows()), POLL, "the odd client's request time"
    )
    assert all(s.user is None for s in rows() if s.client_id == odd)


@pytest.mark.parametrize(
    ("entity", "client_tag"),
    [
        (["--entity-type", "users", "--entity-name", "carol"], False),
        (["--entity-type", "users", "--entity-default"], False),
        (
            ["--entity-type", "users", "--entity-name", "carol", "--entity-type", "clients",
             "--entity-default"],
            True,
        ),
        (
            ["--entity-type", "users", "--entity-default", "--entity-type", "clients",
             "--entity-default"],
            True,
        ),
    ],
    ids=["user", "default-user", "user-default-client", "default-user-default-client"],
)  # fmt: skip
def test_03_each_level_tags(
    live: Live, entity: list[str], client_tag: bool, request: pytest.FixtureRequest
) -> None:
    """Fact: the tags are those of the level that matched: a user level tags user only, a
    user+client-id level both, a client-id level client_id only (test_02)."""
    client_id = "fact-level-" + request.node.callspec.id
    set_quota(live, entity, "producer_byte_rate=1e12")
    try:
        produce(live.broker, "carol", client_id, 20_000, 2)
        text = exported(live)
        rate = [
            x
            for x in text.splitlines()
            if x.startswith("kafka_server_quota_byte_rate{") and 'user="carol"' in x
        ]
        with_client = [x for x in rate if f'client_id="{client_id}"' in x]
        if client_tag:
            assert len(with_client) == 1, rate
        else:
            assert with_client == [] and any("client_id=" not in x for x in rate), rate
    finally:
        delete_quota(live, entity, "producer_byte_rate")


def test_04_throttled_rate_is_censored(live: Live) -> None:
    """Fact: a principal throttled below its demand shows a rate near its quota, far below
    what it tried to send, and a throttle time beside it: the rate alone hides the demand."""
    bob = ["--entity-type", "users", "--entity-name", "bob"]
    set_quota(live, bob, "producer_byte_rate=20000")
    since = time.time()
    try:
        sent = produce(live.broker, "bob", "fact-throttled", 50_000, 8)
    finally:
        delete_quota(live, bob, "producer_byte_rate")

    def seen() -> bool:
        rows = [s for s in samples(live, since) if s.user == "bob"]
        return any(s.metric == PRODUCE_THROTTLE_TIME and s.value > 100 for s in rows) and any(
            s.metric == PRODUCE_BYTE_RATE for s in rows
        )

    rows = [s for s in samples(live, since) if s.user == "bob"]
    assert_eventually(
        seen, POLL, f"bob's throttle time in Prometheus (sent {sent}, had {_peaks(rows)})"
    )
    rows = [s for s in samples(live, since) if s.user == "bob"]
    peak_rate = max(s.value for s in rows if s.metric == PRODUCE_BYTE_RATE)
    peak_throttle = max(s.value for s in rows if s.metric == PRODUCE_THROTTLE_TIME)
    print(
        f"throttled bob: peak byte-rate {peak_rate:.0f} B/s, throttle-time {peak_throttle:.0f} ms"
    )
    # Demand was 50,000 B/s; the observed rate stays near the 20,000 B/s quota.
    assert peak_rate < 40_000
    assert peak_throttle > 100
    assert all(s.client_id is None for s in rows)  # a user level: no client-id tag


def test_05_idle_sensor_stays_and_reads_zero(live: Live) -> None:
    """Fact: an idle principal's sensor outlives its traffic: the series stays and its rate
    falls to 0 within the quota window (11 one-second samples); Kafka expires an idle quota
    sensor after an hour, which no test waits for."""
    set_quota(live, DEFAULT_CLIENT, "producer_byte_rate=1e12")
    try:
        produce(live.broker, "alice", "fact-idle", 20_000, 2)

        def rate_lines() -> list[str]:
            return [
                x
                for x in quota_lines(exported(live), "fact-idle")
                if x.startswith("kafka_server_quota_byte_rate{")
            ]

        assert rate_lines() and float(rate_lines()[0].rsplit(" ", 1)[1]) > 0
        assert_eventually(
            lambda: rate_lines() and float(rate_lines()[0].rsplit(" ", 1)[1]) == 0, POLL, "rate 0"
        )
        assert len(rate_lines()) == 1
    finally:
        delete_quota(live, DEFAULT_CLIENT, "producer_byte_rate")


def test_06_usage_reports_known_rates(live: Live) -> None:
    """Prove it live: producers at known rates as several principals; the rows from
    Prometheus show each principal's rate within 25% (a record's bytes on the wire carry
    batch and request overhead, and the sensor's window fills over its first 10 s)."""
    both = ["--entity-type", "users", "--entity-default"]
    set_quota(live, both, "producer_byte_rate=1e12")
    loads = {"alice": 40_000.0, "carol": 20_000.0}
    since = time.time()
    try:
        produce_together(
            live.broker, [(u, f"known-{u}", rate) for u, rate in loads.items()], seconds=14
        )
    finally:
        delete_quota(live, both, "producer_byte_rate")

    def peaks() -> dict[str, float]:
        found: dict[str, float] = {}
        for s in samples(live, since):
            if s.metric == PRODUCE_BYTE_RATE and s.user in loads:
                found[s.user] = max(found.get(s.user, 0.0), s.value)
        return found

    assert_eventually(
        lambda: all(peaks().get(u, 0) > 0.75 * rate for u, rate in loads.items()),
        POLL,
        "both principals' rates in Prometheus",
    )
    got = peaks()
    print(f"known rates {loads}, observed peaks {got}")
    for user, rate in loads.items():
        assert math.isclose(got[user], rate, rel_tol=0.25), (user, got[user], rate)
    every = samples(live, since)
    assert {s.broker for s in every} == {live.broker.metrics_address}
    assert {s.cluster for s in every} == {"dev"}


def test_06b_kquota_usage_reads_prometheus(live: Live, capsys: pytest.CaptureFixture[str]) -> None:
    """`kquota usage --prometheus URL`: test_06's principals, from the live server, with the
    effective quotas from the live broker."""
    import json

    from cli_runner import run_kquota

    code, out, err = run_kquota(
        ["usage", "--prometheus", live.prometheus.url, "--bootstrap-server",
         live.broker.bootstrap_servers, "--since", "10m", "--format", "json"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["cluster"] == "dev"  # the scrape target's cluster label
    assert report["source"] == live.prometheus.url
    alice = [
        u
        for u in report["usage"]
        if u["entity"] == {"user": "alice"} and u["metric"] == PRODUCE_BYTE_RATE
    ]
    assert len(alice) == 1, report["usage"]
    # The command reads at a 15 s step: it may catch test_06's 14 s burst on its way up or
    # down (test_06 reads every second and checks the rate itself), never above it.
    assert 0 < alice[0]["max"] <= 1.25 * 40_000, alice


def test_06c_kquota_usage_prometheus_errors(live: Live, capsys: pytest.CaptureFixture[str]) -> None:
    from cli_runner import run_kquota

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = ["--bootstrap-server", live.broker.bootstrap_servers]
    code, out, err = run_kquota(
        ["usage", "--prometheus", f"http://reader:pw-canary@127.0.0.1:{port}", *target], capsys
    )
    assert code != 0 and "Traceback" not in err + out
    assert f"cannot reach Prometheus at http://127.0.0.1:{port}: Connection refused" in err
    assert "pw-canary" not in err + out
    code, _, err = run_kquota(
        ["usage", "--prometheus", live.prometheus.url, "--samples", "x.jsonl", *target], capsys
    )
    assert code != 0 and "--samples or --prometheus, not both" in err
    code, _, err = run_kquota(
        ["usage", "--prometheus", live.prometheus.url, "--prometheus-token-env", "KQ_NOPE_TOKEN",
         *target],
        capsys,
    )  # fmt: skip
    assert code != 0 and "$KQ_NOPE_TOKEN is not set or empty" in err


def test_06d_plan_replays_usage_read_from_prometheus(
    live: Live,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`kquota plan --usage URL`: test_06's principals, read from the live server (with
    credentials in the URL that no output shows), replayed against a plan that lowers alice
    far below the 40,000 B/s she sent: she would have been throttled."""
    import json

    from cli_runner import run_kquota

    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\n"
        "quotas: [{match: {user: alice}, set: {producer_byte_rate: 1000}}]\n"
    )
    url = live.prometheus.url.replace("http://", "http://reader:pw-canary@")
    argv = ["plan", "--usage", url, "--since", "10m", "--bootstrap-server",
            live.broker.bootstrap_servers]  # fmt: skip
    code, out, err = run_kquota([*argv, "--format", "json"], capsys)
    assert code == 0, err
    assert "pw-canary" not in out + err and "reader" not in out + err
    replay = json.loads(out)["throttle_replay"]
    (alice,) = [p for p in replay["principals"] if p["principal"] == {"user": "alice"}]
    assert alice["throttled_after"]["throttled_fraction"] > 0, alice
    code, out, err = run_kquota([*argv, "--out", "plan.json"], capsys)
    assert code == 0, err
    assert f"Throttle replay of {live.prometheus.url} (samples " in out
    saved = (tmp_path / "plan.json").read_text()
    assert "pw-canary" not in out + err + saved and live.prometheus.url in saved
    # Unreachable: named without the credentials.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv[2] = f"http://reader:pw-canary@127.0.0.1:{port}"
    code, out, err = run_kquota(argv, capsys)
    assert code == 1 and "Traceback" not in err
    assert f"cannot reach Prometheus at http://127.0.0.1:{port}: Connection refused" in err
    assert "pw-canary" not in out + err


def test_06e_the_usage_dashboard_reads_the_live_series(live: Live) -> None:
    """examples/grafana/kquota-usage.json on the real thing: every query, its variables
    filled in as Grafana would, runs on this Prometheus (2.42) scraping this broker's
    exporter, and the rate panels show test_06's principals."""
    import re

    from grafana_dashboards import dashboard, expressions

    filled = {"$cluster": "dev", "$user": ".*", "$__range": "10m"}
    answers: dict[str, list[object]] = {}
    for expr in expressions(dashboard("kquota-usage.json")):
        for name, value in filled.items():
            expr = expr.replace(name, value)
        variable = re.fullmatch(r"label_values\((\w+), (\w+)\)", expr)
        if variable is not None:  # Grafana's, not PromQL: the label must be on the series
            series = live.prometheus.query(variable[1])
            assert any(variable[2] in s["metric"] for s in series), expr
            continue
        assert "$" not in expr, expr
        answers[expr] = live.prometheus.query(expr)  # asserts Prometheus took it
    produce = [e for e in answers if e.startswith("max by (user, client_id)") and "Produce" in e]
    assert len(produce) == 1, list(answers)
    users = {r["metric"].get("user") for r in answers[produce[0]]}  # type: ignore[index]
    assert {"alice", "carol"} <= users, users
    # The scrape the panels read holds only the metrics the rules publish (request time
    # only while a request quota applies somewhere: test_02c's).
    names = {line.split("{")[0] for line in exported(live).splitlines()
             if line.startswith("kafka_server_quota_")}  # fmt: skip
    assert "kafka_server_quota_byte_rate" in names, names
    assert names <= {"kafka_server_quota_byte_rate", "kafka_server_quota_request_time",
                     "kafka_server_quota_throttle_time"}, names  # fmt: skip


def test_07_too_many_series_refused_with_a_count(live: Live) -> None:
    since = time.time() - 600
    assert_eventually(
        lambda: len({(s.user, s.client_id, s.metric) for s in samples(live, since)}) > 2,
        POLL,
        "series",
    )
    with pytest.raises(PrometheusError, match=r"holds \d+ quota series.*at most 2 at once"):
        samples(live, since, max_series=2)


def test_08_selector_narrows(live: Live) -> None:
    since = time.time() - 600
    assert samples(live, since, selector='cluster="elsewhere"') == []


def test_09_basic_auth_from_env_and_never_shown(live: Live, tmp_path: Path) -> None:
    assert live.broker.metrics_address is not None
    with running_prometheus(
        tmp_path / "p", {"dev": [live.broker.metrics_address]}, basic_auth=("reader", "s3cr3t-pw")
    ) as guarded:
        start, end = time.time() - 60, time.time()
        got = list(
            prometheus_samples(
                guarded.url, "dev", start=start, end=end, step=5,
                basic_auth_env="KQ_PROM_AUTH", env={"KQ_PROM_AUTH": "reader:s3cr3t-pw"},
            )
        )  # fmt: skip
        assert isinstance(got, list)
        with pytest.raises(PrometheusError) as refused:
            list(
                prometheus_samples(
                    guarded.url.replace("http://", "http://reader:wrong-pw@"), "dev",
                    start=start, end=end, step=5,
                )
            )  # fmt: skip
        assert "refused the request (401)" in str(refused.value)
        assert "wrong-pw" not in str(refused.value) and "reader" not in str(refused.value)


def _host_port(live: Live) -> tuple[str, int]:
    assert live.broker.metrics_address is not None
    host, port = live.broker.metrics_address.split(":")
    return host, int(port)


def _peaks(rows: list[Sample]) -> dict[tuple[str, str | None, str | None], float]:
    found: dict[tuple[str, str | None, str | None], float] = {}
    for s in rows:
        key = (s.metric, s.user, s.client_id)
        found[key] = max(found.get(key, 0.0), s.value)
    return found
