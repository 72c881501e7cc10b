"""The ``kquota`` command group.

Commands are loaded lazily from their own modules (one module a command, each exposing
``command``), so ``kquota --help`` and quick commands do not import the codec, Spark or the
planner they do not use.
"""

from __future__ import annotations

import codecs
import errno
import importlib
import io
import os
import sys
from typing import Any, NoReturn

import click

from kquota.cli.console import NO_COLOR_HELP, QUIET_HELP, VERBOSE_HELP
from kquota.errors import KquotaError
from kquota.version import __version__

# name -> module path; each module defines a click command (or group) named `command`.
_COMMANDS: dict[str, str] = {
    "dev-broker": "kquota.cli.dev_broker",
    "fleet": "kquota.cli.fleet",
    "apply": "kquota.cli.apply",
    "drift": "kquota.cli.drift",
    "snapshot": "kquota.cli.snapshot",
    "describe": "kquota.cli.describe",
    "alter": "kquota.cli.alter",
    "validate": "kquota.cli.validate",
    "plan": "kquota.cli.plan",
    "show": "kquota.cli.show",
    "resolve": "kquota.cli.resolve",
    "export": "kquota.cli.export",
    "import": "kquota.cli.import_quotas",
    "lease": "kquota.cli.lease",
    "revert": "kquota.cli.revert",
    "history": "kquota.cli.history",
    "topics": "kquota.cli.topics",
    "usage": "kquota.cli.usage",
    "recommend": "kquota.cli.recommend",
}


# Errors of writing output: a reader that closed the pipe (``kquota export | head``), a full
# disk, a quota, an I/O error. They end the command with one line, never a traceback.
_OUTPUT_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class OutputError(KquotaError):
    """OutputError: standard output (or a file being written) cannot take more."""

    def __init__(self, e: OSError) -> None:
        if e.errno == errno.EPIPE:
            text = "output closed before kquota finished writing (broken pipe)"
        else:
            text = f"cannot write output: {e.strerror or e}"
        super().__init__(text)


class _LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        # Here, not in main: click's own main turns a broken pipe into a silent exit 1.
        try:
            return super().invoke(ctx)
        except OSError as e:
            if e.errno not in _OUTPUT_ERRNOS:
                raise
            raise OutputError(e) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _COMMANDS.get(cmd_name)
        if module is None:
            return None
        from kquota.runtime.gcpause import collector_paused

        # A command's modules are tens of thousands of new objects, none of them garbage: the
        # collector would walk them several times over while they load (5-8 ms).
        with collector_paused():
            cmd = importlib.import_module(module).command
        assert isinstance(cmd, click.Command)
        from kquota.cli.console import accept_root_flags

        accept_root_flags(cmd)
        return cmd


_EPILOG = """\b
Examples:
  kquota validate                           check quotas/ (or kquota.yaml's folders) offline
  kquota plan --cluster prod                what would change on a cluster of kquota.yaml
  kquota apply --cluster prod               plan, ask, then apply
  kquota drift --all --format prometheus --out drift.prom
  kquota resolve --names user=alice,client-id=app --cluster prod --explain

\b
Colour: on a terminal only; NO_COLOR, FORCE_COLOR, TERM=dumb and --no-color as usual.
Shell completion: eval "$(_KQUOTA_COMPLETE=bash_source kquota)" (zsh_source, fish_source).
"""


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=_EPILOG,
)
@click.version_option(__version__, "-V", "--version", prog_name="kquota")
@click.option(
    "-v",
    "--verbose",
    count=True,
    help=VERBOSE_HELP,
)
@click.option("-q", "--quiet", is_flag=True, help=QUIET_HELP)
@click.option("--no-color", is_flag=True, help=NO_COLOR_HELP)
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool, no_color: bool) -> None:
    """GitOps for Apache Kafka client quotas."""
    from kquota.cli import console
    from kquota.cli.waiting import waiting_indicator

    console.configure(verbose, quiet, no_color)
    ctx.with_resource(waiting_indicator(sys.stderr))
    if verbose:
        ctx.call_on_close(
            lambda: click.echo(f"kquota: finished in {console.elapsed():.1f} s", err=True)
        )


def main(argv: list[str] | None = None) -> Any:
    """main runs the CLI, turning KquotaError into a message and an exit code."""
    return run_command(cli, argv, "kquota")


def entry() -> NoReturn:
    """entry is the ``kquota`` console script's (and ``python -m kquota``'s): :func:`main`,
    then the process ends with its exit status, without the interpreter's teardown when
    nothing needs it (:mod:`kquota.runtime.ending`)."""
    from kquota.runtime.ending import end_process

    try:
        code = main()
    except SystemExit as e:
        code = e.code
    end_process(code)


UNICODE_ESCAPE = "kquota-unicode-escape"


def _unicode_escape(error: UnicodeError) -> tuple[str, int]:
    """Every character the encoding cannot carry as ``\\uXXXX``, one beyond the BMP as its
    UTF-16 surrogate pair: JSON's own escapes (RFC 8259, section 7), so ``--format json``
    stays JSON on any stream, where ``backslashreplace``'s ``\\xe9`` and ``\\U0001f600``
    are not."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    escaped = []
    for char in error.object[error.start : error.end]:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped), error.end


codecs.register_error(UNICODE_ESCAPE, _unicode_escape)


def escape_unencodable_output() -> None:
    """escape_unencodable_output: on a standard output or error whose encoding cannot carry
    a name (``LANG=C``, ``PYTHONIOENCODING=latin-1``), write ``\\u540d`` for it instead of
    ending in UnicodeEncodeError. UTF-8 streams never need it and are left as they are."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            reconfigure(errors=UNICODE_ESCAPE)


def run_command(command: click.Command, argv: list[str] | None, prog_name: str) -> Any:
    """run_command runs a click command as a console script: errors become one message on
    stderr and an exit code, never a traceback (shared by kquota and kafka-client-quotas)."""
    escape_unencodable_output()
    try:
        code = command.main(args=argv, prog_name=prog_name, standalone_mode=False)
        _flush_stdout()
        return code
    except OutputError as e:
        _discard_stdout()
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as e:
        e.show()
        # Usage errors exit 1, never 2: 2 means "changes" for --detailed-exitcode.
        sys.exit(1)
    except KquotaError as e:
        # A desired-state load that failed still warned (files it did not read, look-alike
        # names): the warnings come first, as for a load that succeeded.
        for warning in e.warnings:
            click.echo(f"warning: {warning}", err=True)
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except OSError as e:
        if e.errno not in _OUTPUT_ERRNOS:
            raise
        raise OutputError(e) from None


def _discard_stdout() -> None:
    """_discard_stdout points standard output at /dev/null, so that the interpreter's last
    flush of what is still buffered does not fail again with a second message."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # no real descriptor (tests capture output): nothing will be flushed to it


if __name__ == "__main__":
    # As the console script does: main returns the exit code of a command that ended with
    # click's Exit (validate's 1, plan's 2), so `python -m kquota.cli.main` must pass it on.
    entry()
