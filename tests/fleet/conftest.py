"""One local-mode Spark engine for the fleet tests (a JVM start costs seconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kquota.engines.spark import SparkEngine, SparkSettings


@pytest.fixture(scope="session")
def spark_engine() -> Iterator[SparkEngine]:
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
