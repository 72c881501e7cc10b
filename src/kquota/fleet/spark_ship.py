"""What Spark executors need to run kquota's code, shipped by Spark's own mechanism.

Executors parse YAML and JSON with kquota's loaders and call kquota's functions in UDFs, so
their Python must import ``kquota`` and what those modules import (measured: PyYAML, pydantic
with pydantic-core, annotated-types, typing-extensions, typing-inspection, orjson). Python
files alone (``spark.submit.pyFiles``, a zip on ``sys.path``) do not suffice: pydantic-core and
orjson are compiled extensions, which Python cannot import from a zip. So the driver packs
these packages from its own environment into one ``.tar.gz``, Spark's ``spark.archives``
unpacks it into every executor's working directory, and ``spark.executorEnv.PYTHONPATH`` puts
it on the executors' path. The executors' Python must therefore be the driver's version on
the driver's platform (``PYSPARK_PYTHON`` / ``spark.pyspark.python``); :func:`check_executors`
runs a probe job first and turns anything missing into one clear error.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kquota.errors import KquotaError

EXECUTOR_PACKAGES = (
    "kquota",
    "yaml",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "typing_inspection",
    "orjson",
)
# What executor-side code imports first: a probe that imports these has covered the rest.
EXECUTOR_ENTRY_MODULES = (
    "kquota.desired.loader",
    "kquota.snapshot.files",
    "kquota.snapshot.rows",
    "kquota.fleet.resolve",
    "kquota.policy",
)
ARCHIVE_DIR = "kquota_env"


def _source_of(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None and not spec.submodule_search_locations:
        raise KquotaError(
            f"cannot ship {name!r} to the Spark executors: it is not installed with kquota here"
        )
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(str(spec.origin))


def _skip_cache(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if "__pycache__" in info.name.split("/") else info


def build_archive(folder: Path, extra: tuple[str, ...] = ()) -> Path:
    """build_archive packs :data:`EXECUTOR_PACKAGES` and ``extra`` packages from this Python
    into ``folder``."""
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    path = folder / f"kquota-executor-{tag}.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name in (*EXECUTOR_PACKAGES, *extra):
            source = _source_of(name)
            tar.add(source, arcname=source.name, filter=_skip_cache)
            # A manylinux wheel keeps its vendored shared libraries beside the package
            # (auditwheel's ``<package>.libs``, e.g. numpy's OpenBLAS): they travel with it.
            libs = source.parent / f"{source.name}.libs"
            if source.is_dir() and libs.is_dir():
                tar.add(libs, arcname=libs.name, filter=_skip_cache)
    return path


def ship_settings(archive: Path, conf: dict[str, str]) -> dict[str, str]:
    """ship_settings adds the archive to the session's settings, keeping the user's own."""
    archives = conf.get("spark.archives", "")
    entry = f"{archive.resolve().as_uri()}#{ARCHIVE_DIR}"
    python_path = conf.get("spark.executorEnv.PYTHONPATH", "")
    return {
        "spark.archives": f"{archives},{entry}" if archives else entry,
        "spark.executorEnv.PYTHONPATH": (
            f"{ARCHIVE_DIR}{os.pathsep}{python_path}" if python_path else ARCHIVE_DIR
        ),
    }


def _make_probe(modules: tuple[str, ...]) -> Callable[[Any], dict[str, Any]]:
    # A closure, so cloudpickle sends it by value: it must run where kquota cannot be imported.
    def probe(_: Any) -> dict[str, Any]:
        import importlib
        import platform
        import sys

        missing = {}
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as e:
                missing[name] = f"{type(e).__name__}: {e}"
        return {
            "python": platform.python_version(),
            "executable": sys.executable,
            "missing": missing,
        }

    return probe


def check_executors(spark: Any, shipped: bool, extra: tuple[str, ...] = ()) -> None:
    """check_executors imports what kquota needs on the executors (and the ``extra``
    modules); raises what is missing."""
    sc = spark.sparkContext
    slices = max(1, int(sc.defaultParallelism))
    probe = _make_probe((*EXECUTOR_ENTRY_MODULES, *extra))
    # A failing probe is reported below in one line; Spark's own log of it is a stack trace.
    sc.setLogLevel("OFF")
    try:
        reports = sc.parallelize(range(slices), slices).map(probe).collect()
    except Exception as e:
        raise KquotaError(
            f"the Spark executors cannot run Python {sc.pythonExec}: {_python_error(e)}."
            + _advice(shipped)
        ) from None
    finally:
        sc.setLogLevel("ERROR")
    for report in reports:
        if report["missing"]:
            listed = "; ".join(f"{m}: {why}" for m, why in sorted(report["missing"].items()))
            raise KquotaError(
                f"the Spark executors cannot import what kquota needs there ({listed}); "
                f"executor Python {report['python']} at {report['executable']}, driver Python "
                f"{sys.version.split()[0]}.{_advice(shipped)}"
            )


def _advice(shipped: bool) -> str:
    if shipped:
        return (
            " kquota ships its code and libraries from the driver's Python to the executors "
            "(spark.archives); point the executors at a Python of the same version "
            "(PYSPARK_PYTHON or --conf spark.pyspark.python=...), with pyspark's own needs."
        )
    return " Install kquota into the executors' Python, or let kquota ship it (--ship)."


def _python_error(e: Exception) -> str:
    """_python_error is the last line of the executor's Python traceback, or the Java error."""
    text = str(e)
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and ("Error" in line or "Exception" in line)
    ]
    python_lines = [line for line in lines if not line.startswith(("org.", "java.", "at "))]
    last = (python_lines or lines or [text.strip().splitlines()[0] if text.strip() else "?"])[-1]
    return last.removeprefix("Caused by: ")
