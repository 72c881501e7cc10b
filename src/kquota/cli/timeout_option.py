"""``--timeout DURATION``: one overall deadline for a whole command.

Every command that reaches a cluster takes it, and the fleet commands; the defaults are in
:data:`kquota.deadline.DEFAULT_TIMEOUTS` and shown by ``--help``. Connecting, every request,
every retry and its backoff, and apply's verification all end by it; the message then names
what the command was waiting on.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from kquota.cli.waiting import waiting_indicator
from kquota.deadline import DEFAULT_TIMEOUTS, bounded, format_duration, parse_duration


def timeout_option(command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """timeout_option adds ``--timeout`` to ``command`` and runs it under that deadline."""
    default = format_duration(DEFAULT_TIMEOUTS[command])

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @click.option(
            "--timeout",
            "timeout_text",
            metavar="DURATION",
            default=default,
            show_default=True,
            help="Overall deadline for the whole command (90s, 5m, 1h): connecting, retries "
            "and verification included.",
        )
        @functools.wraps(f)
        def run(*args: Any, timeout_text: str, **kwargs: Any) -> Any:
            seconds = parse_duration(timeout_text)
            with bounded(seconds, f"--timeout {timeout_text}"), waiting_indicator(sys.stderr):
                return f(*args, **kwargs)

        return run

    return decorate
