"""Build the Java peer programs of the benchmarks (benchmarks/java) with Maven.

Each benchmark builds into its own cache directory, so two benchmarks never race on one
``target``; nothing is built inside the repository.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

JAVA_DIR = Path(__file__).parent / "java"


def build_java(main_class: str, build_name: str, kafka_version: str) -> list[str]:
    """build_java compiles benchmarks/java and returns the command prefix of ``main_class``."""
    out = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kquota" / build_name
    out.mkdir(parents=True, exist_ok=True)
    cp_file = out / "classpath.txt"
    subprocess.run(
        [
            "mvn", "-q", "-f", str(JAVA_DIR / "pom.xml"),
            f"-Dkquota.build.dir={out / 'target'}",
            f"-Dkafka.version={kafka_version}",
            "compile", "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}",
        ],
        check=True,
    )  # fmt: skip
    classpath = f"{out / 'target' / 'classes'}{os.pathsep}{cp_file.read_text().strip()}"
    return ["java", "-cp", classpath, main_class]
