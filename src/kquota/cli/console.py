"""The terminal habits every command shares: ``-v/--verbose``, ``-q/--quiet``, colour.

Colour follows the usual rules, first match wins: ``--no-color``; ``NO_COLOR`` set and not
empty (https://no-color.org); ``FORCE_COLOR`` set and not empty or ``0`` (colour even into a
pipe); ``TERM=dumb``; otherwise colour only when the stream is a terminal.

``-v`` shows, on standard error, one line per phase with its count and time (also off a
terminal: CI logs), kquota's own log lines (connection retries, brokers skipped) and the total
time; ``-vv`` adds debug lines (authentication, bootstrap attempts). ``-q`` shows no
progress, phase lines or waiting indicator: only the output, warnings and errors. Standard
output is never touched by either.

The three flags are the root group's, and are also taken after a command's name (``kquota
plan --no-color``, as Terraform users type them): :func:`accept_root_flags` gives every
command hidden copies that add to what the root was given.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import click


@dataclass
class Settings:
    """Settings are the root group's flags, for the command that runs."""

    verbose: int = 0
    quiet: bool = False
    no_color: bool = False
    began: float = 0.0


settings = Settings(began=time.monotonic())


def configure(verbose: int, quiet: bool, no_color: bool) -> None:
    """configure records the root flags and routes kquota's log lines to stderr with -v."""
    if verbose and quiet:
        raise click.UsageError("-v/--verbose and -q/--quiet exclude each other")
    settings.verbose, settings.quiet, settings.no_color = verbose, quiet, no_color
    settings.began = time.monotonic()
    if not verbose and "logging" not in sys.modules:
        # Nothing to undo (no handler of ours, the logger's level its default, NOTSET), and
        # importing logging (and traceback) is about 4 ms of every command's start.
        return
    import logging

    log = logging.getLogger("kquota")
    for old in [h for h in log.handlers if getattr(h, "kquota_verbose", False)]:
        log.removeHandler(old)  # one command at a time (tests run many in one process)
    log.setLevel(logging.NOTSET)
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.kquota_verbose = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter("kquota: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)


VERBOSE_HELP = "Phases with counts and timings, retries and the total time on stderr (-vv: more)."
QUIET_HELP = "No progress or phase lines: output and errors."
NO_COLOR_HELP = "No colour, even on a terminal."


def _add_root_flag(ctx: click.Context, param: click.Parameter, value: object) -> None:
    """_add_root_flag: a root flag given after a command's name counts as if given first."""
    if not value or ctx.resilient_parsing:
        return
    verbose, quiet, no_color = settings.verbose, settings.quiet, settings.no_color
    if param.name == "verbose":
        assert isinstance(value, int)
        verbose += value
    elif param.name == "quiet":
        quiet = True
    else:
        no_color = True
    if verbose and quiet:
        raise click.UsageError("-v/--verbose and -q/--quiet exclude each other")
    if verbose and not settings.verbose:
        root = ctx.find_root()
        root.call_on_close(lambda: click.echo(f"kquota: finished in {elapsed():.1f} s", err=True))
    began = settings.began
    configure(verbose, quiet, no_color)
    settings.began = began  # the command's time runs from the start, not from this flag


def accept_root_flags(command: click.Command) -> None:
    """accept_root_flags gives ``command`` (and a group's subcommands) hidden ``-v``, ``-q``
    and ``--no-color``: hidden, so each command's ``--help`` stays as it was."""
    if getattr(command, "kquota_root_flags", False):
        return
    command.kquota_root_flags = True  # type: ignore[attr-defined]
    hidden: dict[str, Any] = {"hidden": True, "expose_value": False, "callback": _add_root_flag}
    command.params += [
        click.Option(["-v", "--verbose"], count=True, help=VERBOSE_HELP, **hidden),
        click.Option(["-q", "--quiet"], is_flag=True, help=QUIET_HELP, **hidden),
        click.Option(["--no-color"], is_flag=True, help=NO_COLOR_HELP, **hidden),
    ]
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            accept_root_flags(sub)


def use_color(stream: TextIO | None = None) -> bool:
    """use_color: whether to colour what goes to ``stream`` (standard output by default)."""
    if settings.no_color or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    stream = stream if stream is not None else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def echo(text: str, colorize: Callable[[str], str] | None = None) -> None:
    """echo writes a command's text output, coloured by ``colorize`` if colour is on (click
    strips colour off a terminal unless told, so FORCE_COLOR passes ``color=True``)."""
    if colorize is not None and use_color():
        click.echo(colorize(text), nl=False, color=True)
    else:
        click.echo(text, nl=False, color=False)


def by_glyph(text: str) -> str:
    """by_glyph colours plan text by each line's glyph: ``+`` green, ``~`` yellow, ``-`` red
    (an op line is a glyph and a space; anything else is left as it is)."""
    styles = _GLYPH_STYLES
    out: list[str] = []
    append = out.append
    for line in text.splitlines(keepends=True):
        body = line.lstrip()
        style = styles.get(body[:1])
        if style is not None and body[1:2] == " ":
            append(style[0] + line + style[1])
        else:
            append(line)
    return "".join(out)


def _style_around(color: str) -> tuple[str, str]:
    """The codes ``click.style(text, fg=color)`` puts before and after any text, taken from
    click itself: a plan of 100k lines is coloured without a call per line."""
    before, after = click.style("\x00", fg=color).split("\x00")
    return before, after


_GLYPH_STYLES = {
    glyph: _style_around(c) for glyph, c in (("+", "green"), ("~", "yellow"), ("-", "red"))
}


_DRIFT_KINDS = {"added": "green", "changed": "yellow", "removed": "red", "undeclared": "red"}


def drift_colors(text: str) -> str:
    """drift_colors: a cluster's headline green in sync, yellow with drift; each finding by
    its kind (``value_changed`` yellow, ``key_removed`` and ``entity_undeclared`` red)."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        if not line.startswith(" ") and body.endswith(": in sync"):
            out.append(click.style(line, fg="green"))
        elif not line.startswith(" ") and ": drift in " in body:
            out.append(click.style(line, fg="yellow", bold=True))
        elif line.startswith("    ") and not line.startswith("     "):
            kind = body.strip().split(":", 1)[0]
            fg = next((c for k, c in _DRIFT_KINDS.items() if kind.endswith(k)), None)
            out.append(click.style(line, fg=fg) if fg else line)
        else:
            out.append(line)
    return "".join(out)


def resolution_colors(text: str) -> str:
    """resolution_colors: a key with a quota in bold, an unlimited one dimmed."""
    out = []
    for line in text.splitlines(keepends=True):
        head = line.split(maxsplit=1)[0] if line.strip() else ""
        if "=" in head and not line.startswith(" "):
            unlimited = head.endswith("=unlimited")
            out.append(click.style(line, dim=True) if unlimited else click.style(line, bold=True))
        else:
            out.append(line)
    return "".join(out)


def elapsed() -> float:
    return time.monotonic() - settings.began
