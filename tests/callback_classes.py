"""A dev broker running one of the test quota callbacks (``tests/quota_callbacks/*.java``).

The callbacks share one skeleton (``NoLimitQuotaCallback``) and are compiled together
against the broker's own jars onto its classpath; the broker loads the one its
``client.quota.callback.class`` names.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import KAFKA_VERSION
from kquota.devbroker.jars import KafkaJars, find_java
from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker

SOURCES = Path(__file__).resolve().parent / "quota_callbacks"
TENANT = "kquota.testing.TenantQuotaCallback"
"""A custom callback of no known product."""


@contextmanager
def broker_with_callback(broker_dir: Path, callback_class: str) -> Iterator[BrokerInfo]:
    """broker_with_callback runs a dev broker in ``broker_dir`` whose
    ``client.quota.callback.class`` is ``callback_class``, stopped on the way out."""
    info = start_broker(
        broker_dir,
        kafka_version=KAFKA_VERSION,
        die_with_parent=True,
        extra_properties={"client.quota.callback.class": callback_class},
        extra_classpath=(_compile(broker_dir),),
    )
    try:
        yield info
    finally:
        stop_broker(broker_dir)


def _compile(out: Path) -> Path:
    jars = KafkaJars.resolve(KAFKA_VERSION)
    javac = str(Path(find_java()).resolve().with_name("javac"))
    classes = out / "classes"
    sources = sorted(str(p) for p in SOURCES.glob("*.java"))
    subprocess.run(
        [javac, "-d", str(classes), "-cp", jars.classpath, *sources],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return classes
