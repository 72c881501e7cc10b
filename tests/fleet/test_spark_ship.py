"""What kquota ships to Spark executors, and the error when their Python cannot run it."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from kquota.fleet.spark_ship import EXECUTOR_PACKAGES, build_archive, ship_settings
from kquota.fleet.synth import write_fleet


def test_the_archive_holds_kquota_and_its_compiled_libraries(tmp_path: Path) -> None:
    archive = build_archive(tmp_path)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    tops = {n.split("/")[0] for n in names}
    assert {"kquota", "pydantic_core", "orjson", "yaml", "typing_extensions.py"} <= tops
    assert len(tops) == len(EXECUTOR_PACKAGES)
    assert "kquota/desired/loader.py" in names
    assert any(n.startswith("pydantic_core/") and n.endswith(".so") for n in names)
    assert not any("__pycache__" in n for n in names)


def test_shipping_keeps_the_users_archives_and_python_path(tmp_path: Path) -> None:
    archive = tmp_path / "k.tar.gz"
    conf = {"spark.archives": "hdfs:///envs/x.tar.gz#x", "spark.executorEnv.PYTHONPATH": "lib"}
    assert ship_settings(archive, conf) == {
        "spark.archives": f"hdfs:///envs/x.tar.gz#x,{archive.as_uri()}#kquota_env",
        "spark.executorEnv.PYTHONPATH": f"kquota_env{os.pathsep}lib",
    }


@pytest.mark.spark
def test_an_executor_python_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    write_fleet(tmp_path / "desired", tmp_path / "snapshots", clusters=1, entities=5)
    run = subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", "fleet", "plan",
         "--desired", "desired", "--snapshots", "snapshots", "--out", "out",
         "--engine", "spark", "--master", "local[1]", "--ship", "--driver-memory", "1g",
         "--conf", "spark.pyspark.python=/nonexistent/python3"],
        cwd=tmp_path, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 1
    assert (
        "error: the Spark executors cannot run Python /nonexistent/python3: "
        "java.io.IOException: error=2, No such file or directory." in run.stderr
    )
    assert "Traceback" not in run.stderr and "\tat " not in run.stderr
    assert not (tmp_path / "out").exists()
