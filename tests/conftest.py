"""Shared fixtures: a real Kafka broker for the session, and Kafka's own tools beside it.

The broker is started once per test session from Maven Central jars (``kquota dev-broker``'s
launcher) and stopped at the end even when tests fail or the run is interrupted: the session
finalizer stops it, SIGTERM is turned into an interrupt so finalizers run, and the JVM gets
PR_SET_PDEATHSIG so it dies with pytest if pytest itself is killed.

A missing JVM or Maven fails the tests that need the broker; they are never skipped.
``KQUOTA_KAFKA_VERSION`` picks the Kafka release (4.3.1 by default) and ``KQUOTA_KAFKA_MODE``
its mode (``kraft`` by default, or ``zookeeper`` for 3.x); scripts/compat-matrix runs both.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from cluster_harness import ThreeNodes
from kquota.devbroker.cluster import start_cluster, stop_cluster
from kquota.devbroker.jars import DEFAULT_KAFKA_VERSION, KafkaJars, MissingToolError
from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from kquota.devbroker.tools import kafka_configs
from kquota.fleet.spark import SparkEngine, SparkSettings
from kquota_topics import with_lease_topic
from repo_root import ROOT
from spark_cluster import SparkCluster, standalone_cluster

KAFKA_VERSION = os.environ.get("KQUOTA_KAFKA_VERSION", DEFAULT_KAFKA_VERSION)
KAFKA_MODE = os.environ.get("KQUOTA_KAFKA_MODE", "kraft")
if KAFKA_MODE not in ("kraft", "zookeeper"):
    raise pytest.UsageError(f"KQUOTA_KAFKA_MODE must be kraft or zookeeper, not {KAFKA_MODE!r}")
ZOOKEEPER = KAFKA_MODE == "zookeeper"

# CI is a gate, not a search: its property tests draw the same examples on every run
# (derandomized, seeded by each test), so a green local run of `.ci/run` is the green the
# gate will see. Runs outside CI draw fresh examples each time and go on finding new cases;
# a case found is pinned with @example. print_blob makes any failure reproducible.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _sigterm_as_interrupt)


@pytest.fixture(scope="session", autouse=True)
def _own_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """kquota's per-user state (the directory `dev-broker start` records) goes to the
    session's temporary folder, never into the home of whoever runs the suite."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        yield


@contextmanager
def _running(dir_: Path, **kwargs: object) -> Iterator[BrokerInfo]:
    """_running: a broker of the session's version and mode in ``dir_``, stopped after."""
    try:
        KafkaJars.resolve(KAFKA_VERSION)
    except MissingToolError as e:
        pytest.fail(f"a real Kafka broker is required and cannot be started: {e}", pytrace=False)
    info = start_broker(
        dir_,
        kafka_version=KAFKA_VERSION,
        die_with_parent=True,
        zookeeper=ZOOKEEPER,
        **kwargs,  # type: ignore[arg-type]
    )
    try:
        yield with_lease_topic(info)
    finally:
        stop_broker(dir_)


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    """A running KRaft broker (PLAINTEXT + SASL_PLAINTEXT) shared by the whole session."""
    with _running(
        tmp_path_factory.mktemp("kafka-broker"), extra_users={"alice": "alice-secret"}
    ) as info:
        yield info


@pytest.fixture(scope="session")
def kafka_broker_with_authorizer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    """A second broker with StandardAuthorizer: ``admin`` is super user, ``alice`` has no ACLs."""
    with _running(
        tmp_path_factory.mktemp("kafka-broker-acl"),
        authorizer=True,
        extra_users={"alice": "alice-secret"},
    ) as info:
        yield info


@pytest.fixture(scope="session")
def kafka_broker_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    """A broker that also has SSL (client certificate required) and SASL_SSL listeners."""
    with _running(tmp_path_factory.mktemp("kafka-broker-tls"), tls=True) as info:
        yield info


@pytest.fixture(scope="session")
def three_node_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreeNodes]:
    """One cluster of three KRaft nodes (each broker and controller) for the whole session."""
    try:
        KafkaJars.resolve(KAFKA_VERSION)
    except MissingToolError as e:
        pytest.fail(f"a real Kafka cluster is required and cannot be started: {e}", pytrace=False)
    cluster_dir = tmp_path_factory.mktemp("kafka-cluster")
    info = start_cluster(
        cluster_dir,
        nodes=3,
        kafka_version=KAFKA_VERSION,
        die_with_parent=True,
        extra_users={"alice": "alice-secret"},
        zookeeper=ZOOKEEPER,
    )
    try:
        yield ThreeNodes(cluster_dir, with_lease_topic(info), KAFKA_VERSION)
    finally:
        stop_cluster(cluster_dir)


@pytest.fixture()
def three_nodes(three_node_cluster: ThreeNodes) -> Iterator[ThreeNodes]:
    """The session's three-node cluster, healthy before and after the test (a test that
    kills nodes leaves them to this fixture to restart)."""
    three_node_cluster.heal()
    try:
        yield three_node_cluster
    finally:
        three_node_cluster.heal()


class KafkaConfigsTool:
    """Runs Kafka's kafka-configs against a broker; the independent second client."""

    def __init__(self, broker: BrokerInfo) -> None:
        self.broker = broker

    def __call__(
        self, *args: str, sasl_user: tuple[str, str] | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = kafka_configs(self.broker, *args, sasl_user=sasl_user)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kafka-configs {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}"
            )
        return proc


@pytest.fixture(scope="session")
def kafka_configs_tool(kafka_broker: BrokerInfo) -> KafkaConfigsTool:
    return KafkaConfigsTool(kafka_broker)


@pytest.fixture(scope="session")
def spark_engine() -> Iterator[SparkEngine]:
    """One local-mode Spark engine for the fleet tests (a Spark JVM takes seconds to start)."""
    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        pytest.fail(f"PySpark is required for the fleet tests: {e}", pytrace=False)
    engine = SparkEngine(SparkSettings(master="local[2]", shuffle_partitions=4, driver_memory="1g"))
    engine.session()
    try:
        yield engine
    finally:
        engine.stop()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A standalone Spark master and worker on loopback, shared by the whole session.

    Its executors' Python has pyspark but not kquota (see tests/spark_cluster.py).
    """
    try:
        import pyspark  # noqa: F401
    except ImportError as e:
        pytest.fail(f"PySpark is required for the Spark cluster tests: {e}", pytrace=False)
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster"), cores=2) as cluster:
        yield cluster


# A test that takes a broker fixture crosses the wire, marked or not: the floors run
# (scripts/floors, `-m 'not integration and not jvm'`) must start no broker.
_BROKER_FIXTURES = frozenset(
    {
        "kafka_broker",
        "kafka_broker_with_authorizer",
        "kafka_broker_tls",
        "three_node_cluster",
        "three_nodes",
        "kafka_configs_tool",
    }
)


# A test that takes a Spark fixture starts Spark (a JVM, seconds): marked `spark`, so that it
# can be picked out (`-m spark`); the suite's runs (.ci/run, scripts/check) deselect nothing.
_SPARK_FIXTURES = frozenset({"spark_engine", "spark_cluster"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if _BROKER_FIXTURES & fixtures:
            item.add_marker(pytest.mark.integration)
        if _SPARK_FIXTURES & fixtures:
            item.add_marker(pytest.mark.spark)


def _leaves_out_integration(config: pytest.Config) -> bool:
    """_leaves_out_integration: the run's ``-m`` deselects a test marked only `integration`."""
    from _pytest.mark.expression import Expression

    expr = config.getoption("markexpr", "")
    return bool(expr) and not Expression.compile(expr).evaluate(
        lambda name, **_: name == "integration"
    )


@pytest.fixture(scope="session", autouse=True)
def _offline_runs_start_no_broker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """A run that leaves out `integration` (scripts/floors) fails if a broker started anyway:
    a test that starts one itself (``kquota dev-broker start``, ``start_cluster``) takes no
    broker fixture, so only its marker keeps it out. Every broker the suite starts formats
    its data folder under the run's temporary root, and Kafka's storage format (KRaft) or
    first start (ZooKeeper) writes meta.properties there."""
    yield
    if not _leaves_out_integration(request.config):
        return
    root = tmp_path_factory.getbasetemp()
    started = sorted(str(p.parent.relative_to(root)) for p in root.rglob("meta.properties"))
    if started:
        pytest.fail(
            f"this run leaves out `integration` ({request.config.getoption('markexpr')}) but "
            f"a Kafka broker was started in {', '.join(started)} under {root}: mark the test "
            "that starts it @pytest.mark.integration",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def actionlint() -> Path:
    """The actionlint binary, installed by scripts/actionlint on first use (~40 s): the one
    helper every test that lints a workflow or reads action.yml through actionlint takes."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "actionlint"), "--install-only"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        # A required part is missing: fail, never skip.
        pytest.fail(f"actionlint cannot be installed:\n{proc.stdout}{proc.stderr}", pytrace=False)
    path = Path(proc.stdout.strip().splitlines()[-1])
    assert path.is_file() and os.access(path, os.X_OK), path
    return path


@pytest.fixture
def alter_encodings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """alter_encodings lists, in order, how many entities each AlterClientQuotas body that
    kquota encodes holds (validate-only or commit): a request sent again from the bytes
    already encoded adds nothing."""
    import kquota.kafka.quotawire as qw

    encoded: list[int] = []
    real = qw._alter_request_compact

    def counted(alterations: Any, validate_only: bool) -> Any:
        encoded.append(len(alterations))
        return real(alterations, validate_only)

    monkeypatch.setattr(qw, "_alter_request_compact", counted)
    return encoded
