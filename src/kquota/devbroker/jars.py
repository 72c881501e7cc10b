"""Resolve a pinned Kafka release's jars with Maven into a reusable cache.

The cache is ``$KQUOTA_CACHE_DIR`` (default ``$XDG_CACHE_HOME/kquota`` or ``~/.cache/kquota``)
``/kafka/<version>/lib``. A resolved cache is marked complete only after Maven succeeded, so
an interrupted download is redone rather than half used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from kquota.errors import KquotaError

DEFAULT_KAFKA_VERSION = "4.3.1"
SUPPORTED_KAFKA_VERSIONS = ("4.3.1", "4.4.0", "3.9.2", "3.6.2", "3.0.2")
"""Each has a POM in ``poms/``. 3.0.2 is the oldest Kafka that runs on Java 17 (3.0 added it)."""
KRAFT_KAFKA_VERSIONS = ("4.3.1", "4.4.0", "3.9.2")
"""KRaft as the dev broker runs it (combined nodes, SCRAM at format time: 3.5+; before 3.3
KRaft was not production-ready, so older releases run in ZooKeeper mode only)."""
ZOOKEEPER_KAFKA_VERSIONS = ("3.9.2", "3.6.2", "3.0.2")
"""ZooKeeper mode: every 3.x release (4.0 removed it)."""

_COMPLETE_MARKER = ".complete"


class MissingToolError(KquotaError):
    """MissingToolError: Java or Maven is not installed; the message says what to install."""


def cache_root() -> Path:
    explicit = os.environ.get("KQUOTA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kquota"


def find_java() -> str:
    """find_java returns the java executable (JAVA_HOME first), or explains what to install."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise MissingToolError(
            "Java is not installed (no `java` on PATH and no JAVA_HOME). The local Kafka broker "
            "needs Java 17 or newer: install OpenJDK 17 "
            "(e.g. `apt-get install openjdk-17-jdk-headless`)."
        )
    return found


def find_maven() -> str:
    found = shutil.which("mvn")
    if not found:
        raise MissingToolError(
            "Maven is not installed (no `mvn` on PATH). kquota resolves the Kafka broker's jars "
            "from Maven Central with it: install Maven 3 (e.g. `apt-get install maven`)."
        )
    return found


@dataclass(frozen=True)
class KafkaJars:
    """KafkaJars is a resolved Kafka release: where its jars are and which classes to run."""

    version: str
    lib_dir: Path

    @property
    def classpath(self) -> str:
        return str(self.lib_dir / "*")

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def has_zookeeper(self) -> bool:
        return self.version in ZOOKEEPER_KAFKA_VERSIONS

    @property
    def has_kraft(self) -> bool:
        return self.version in KRAFT_KAFKA_VERSIONS

    @property
    def acl_command_class(self) -> str:
        return "org.apache.kafka.tools.AclCommand" if self.major >= 4 else "kafka.admin.AclCommand"

    @property
    def config_command_class(self) -> str:
        # Kafka 4.4 moved kafka-configs from core (Scala) to the tools module (Java).
        minor = tuple(int(x) for x in self.version.split(".")[:2])
        return (
            "org.apache.kafka.tools.ConfigCommand"
            if minor >= (4, 4)
            else "kafka.admin.ConfigCommand"
        )

    storage_tool_class = "kafka.tools.StorageTool"
    broker_class = "kafka.Kafka"

    @classmethod
    def resolve(cls, version: str = DEFAULT_KAFKA_VERSION, *, quiet: bool = True) -> KafkaJars:
        """resolve returns the cached jars of ``version``, running Maven once if needed."""
        if version not in SUPPORTED_KAFKA_VERSIONS:
            raise KquotaError(
                f"Kafka {version} is not a version kquota pins; "
                f"allowed: {', '.join(SUPPORTED_KAFKA_VERSIONS)}"
            )
        target = cache_root() / "kafka" / version
        lib = target / "lib"
        if (target / _COMPLETE_MARKER).is_file() and lib.is_dir():
            return cls(version, lib)
        find_java()
        _maven_copy(f"kafka-{version}.xml", lib, f"Kafka {version}'s jars", quiet=quiet)
        (target / _COMPLETE_MARKER).write_text(version + "\n")
        return cls(version, lib)


JMX_EXPORTER_VERSION = "1.0.1"
"""The Prometheus JMX exporter java agent ``start --metrics`` attaches (``poms/``)."""


def jmx_exporter_agent(*, quiet: bool = True) -> Path:
    """jmx_exporter_agent is the cached java agent jar of the JMX exporter, resolved by
    Maven once, as the broker's own jars are."""
    target = cache_root() / "jmx-exporter" / JMX_EXPORTER_VERSION
    lib = target / "lib"
    jar = lib / f"jmx_prometheus_javaagent-{JMX_EXPORTER_VERSION}.jar"
    if not ((target / _COMPLETE_MARKER).is_file() and jar.is_file()):
        _maven_copy(
            f"jmx-exporter-{JMX_EXPORTER_VERSION}.xml",
            lib,
            f"the JMX exporter {JMX_EXPORTER_VERSION}'s agent",
            quiet=quiet,
        )
        (target / _COMPLETE_MARKER).write_text(JMX_EXPORTER_VERSION + "\n")
    return jar


def _maven_copy(pom_name: str, lib: Path, what: str, *, quiet: bool) -> None:
    """_maven_copy resolves the runtime dependencies of ``poms/pom_name`` into ``lib``
    (replaced whole, only once Maven succeeded)."""
    mvn = find_maven()
    pom = resources.files("kquota.devbroker").joinpath("poms", pom_name)
    target = lib.parent
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        tmp_lib = Path(tmp) / "lib"
        pom_path = Path(tmp) / "pom.xml"
        pom_path.write_text(pom.read_text())
        cmd = [
            mvn,
            "-B",
            *(["-q"] if quiet else []),
            "-f",
            str(pom_path),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp_lib}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise KquotaError(f"Maven could not resolve {what}:\n{tail}")
        if lib.exists():
            shutil.rmtree(lib)
        tmp_lib.rename(lib)
