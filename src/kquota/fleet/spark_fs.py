"""Fleet inputs through Hadoop's file systems, so ``file://``, ``hdfs://`` and ``s3a://`` work.

The driver lists folders with the JVM's ``org.apache.hadoop.fs.FileSystem`` (whatever schemes
the Spark installation has connectors for) and qualifies every location: a relative path is
made absolute against the driver's working directory, never left for an executor to resolve
in its own. Executors then read the listed files whole (``binaryFiles``, or the
``binaryFile`` source).
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from kquota.desired.loader import SUFFIXES
from kquota.errors import KquotaError


def display_name(location: str) -> str:
    """display_name shows local files as plain paths in messages, other schemes as URIs."""
    return location[len("file:") :] if location.startswith("file:/") else location


class HadoopListing:
    """HadoopListing is :class:`kquota.fleet.layout.Listing` over Hadoop file systems."""

    def __init__(self, spark: Any) -> None:
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs_path(self, location: str) -> tuple[Any, Any]:
        try:
            path = self._jvm.org.apache.hadoop.fs.Path(location)
            fs = path.getFileSystem(self._conf)
            return fs, fs.makeQualified(path)
        except Exception as e:  # py4j carries the Java exception; its message is the story
            raise KquotaError(
                f"{location}: cannot reach this location: {_java_message(e)}"
            ) from None

    def qualify(self, location: str) -> str:
        """qualify makes ``location`` absolute with its scheme (``file:/abs/path`` locally).

        A relative local path is taken from this process's working directory, which is what
        the user means and not always the JVM's (it stays where the session started).
        """
        fs, path = self._fs_path(location)
        if ":" not in location and str(fs.getScheme()) == "file":
            _, path = self._fs_path(os.path.abspath(location))
        return str(path.toString())

    def is_dir(self, location: str) -> bool:
        fs, path = self._fs_path(location)
        return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())

    def entries(self, folder: str) -> list[tuple[str, bool]]:
        fs, path = self._fs_path(folder)
        return [(str(s.getPath().getName()), bool(s.isDirectory())) for s in fs.listStatus(path)]

    def join(self, folder: str, name: str) -> str:
        return posixpath.join(folder, name)

    def files_modified(self, folder: str) -> list[tuple[str, int]]:
        """files_modified gives ``(name, modification time in ms)`` for each file of
        ``folder`` (not its folders)."""
        fs, path = self._fs_path(folder)
        return [
            (str(s.getPath().getName()), int(s.getModificationTime()))
            for s in fs.listStatus(path)
            if not s.isDirectory()
        ]

    def yaml_files(self, folder: str) -> list[str]:
        """yaml_files lists ``*.yaml``/``*.yml`` under ``folder`` as the local loader orders them.

        Recursive, hidden files and folders skipped, sorted by their path parts below
        ``folder`` (see :func:`kquota.desired.loader.expand_paths`).
        """
        found: list[tuple[tuple[str, ...], str]] = []
        stack: list[tuple[tuple[str, ...], str]] = [((), folder)]
        while stack:
            parts, here = stack.pop()
            for name, is_dir in self.entries(here):
                if name.startswith("."):
                    continue
                if is_dir:
                    stack.append(((*parts, name), self.join(here, name)))
                elif name.endswith(SUFFIXES):
                    found.append(((*parts, name), self.join(here, name)))
        return [location for _, location in sorted(found)]


def _java_message(e: Exception) -> str:
    java = getattr(e, "java_exception", None)
    return str(java.toString()) if java is not None else str(e)
