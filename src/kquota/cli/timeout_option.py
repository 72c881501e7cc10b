"""Every time option of the CLI: one syntax (``90s``, ``5m``, ``1h``), one parser, a range.

``--timeout DURATION`` is one overall deadline for a whole command. Every command that reaches
a cluster takes it, and the fleet commands; the defaults are in
:data:`kquota.runtime.deadline.DEFAULT_TIMEOUTS` and shown by ``--help``. Connecting, every request,
every retry and its backoff, and apply's verification all end by it; the message then names
what the command was waiting on.

Every duration is parsed while click reads the command line (:class:`Duration`), so a value
out of its range is refused before anything is read or any connection is made. The ranges:
a cluster command's ``--timeout`` at most an hour (apply's lease claim lasts the timeout plus
a grace, and the lease topic's admin requests take at most an hour), a fleet's a day.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from kquota.cli.waiting import waiting_indicator
from kquota.runtime.deadline import (
    DEFAULT_TIMEOUTS,
    DURATION_SYNTAX,
    bounded,
    format_duration,
    parse_duration,
)

MIN_TIMEOUT = 1.0
"""No deadline shorter than a second: below it not even a connection to localhost settles."""
MAX_TIMEOUT = 3600.0
"""A cluster command's longest deadline, and so the longest apply lease claim (plus grace)."""
MAX_FLEET_TIMEOUT = 24 * 3600.0
"""Fleet commands read files (or run a Spark job), never hold a lease: a day at most."""


class Duration(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.3 only
    """Duration is a time option's type: ``90s``, ``5m``, ``1h``, ``1m30s`` (a bare number is
    seconds) within ``minimum..maximum``; it converts to seconds (float)."""

    name = "duration"

    def __init__(self, option: str, minimum: float, maximum: float) -> None:
        self.option = option
        self.minimum = minimum
        self.maximum = maximum

    @property
    def range(self) -> str:
        """range is the allowed range as ``--help`` says it."""
        return f"{format_duration(self.minimum)} to {format_duration(self.maximum)}"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):  # already converted (a default given as seconds)
            text = format_duration(value)
        elif isinstance(value, str):
            text = value
        else:
            text = str(value)
        # kquota's UsageError, not click's: the project's usage errors read
        # "error: --timeout '0s': out of range; allowed: 1s to 1h" and exit 1.
        return parse_duration(text, self.option, minimum=self.minimum, maximum=self.maximum)


def duration_help(text: str, kind: Duration) -> str:
    """duration_help ends an option's help with the one syntax and its range."""
    return f"{text} {DURATION_SYNTAX}; {kind.range}."


def timeout_option(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """timeout_option adds ``--timeout`` to ``command`` and runs it under that deadline."""
    default = format_duration(DEFAULT_TIMEOUTS[command])
    maximum = MAX_FLEET_TIMEOUT if command == "fleet" else MAX_TIMEOUT
    kind = Duration("--timeout", MIN_TIMEOUT, maximum)

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @click.option(
            "--timeout",
            "timeout_seconds",
            type=kind,
            metavar="DURATION",
            default=default,
            show_default=True,
            help=duration_help(
                "Overall deadline for the whole command, connecting, retries and "
                "verification included:",
                kind,
            ),
        )
        @functools.wraps(f)
        def run(*args: Any, timeout_seconds: float, **kwargs: Any) -> Any:
            label = f"--timeout {format_duration(timeout_seconds)}"
            with bounded(timeout_seconds, label), waiting_indicator(sys.stderr):
                return f(*args, **kwargs)

        return run

    return decorate
