"""``kquota usage``: what each principal really sends, per broker, against its quota.

Samples come from a :class:`kquota.operations.usage.UsageSource` (``--samples PATH``); the
effective quotas from the target (a live cluster, or ``--snapshot`` offline). Read only:
quotas that matched no traffic are named as candidates for removal and never removed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kquota.cli import console
from kquota.cli.examples import EXAMPLES
from kquota.cli.option_group import option_group
from kquota.cli.options import TargetingArgs, format_option, targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.operations.usage import UsageSource

F = TypeVar("F", bound=Callable[..., Any])


def usage_source_options(f: F) -> F:
    """usage_source_options adds the sample sources (received as ``source: UsageSource``)
    and ``--since`` (as ``since: str``): one flag per source, exactly one given."""
    options = [
        click.option(
            "--samples",
            "samples",
            multiple=True,
            type=click.Path(path_type=Path),
            help="Sample files or folders: JSON Lines (.jsonl), Parquet (.parquet) or "
            "Prometheus scrapes (.prom) (repeatable; docs/usage.md).",
        ),
        click.option(
            "--prometheus",
            metavar="URL",
            help="A Prometheus server scraping the brokers' JMX exporters (query_range over "
            "--since up to now; docs/usage.md).",
        ),
        click.option(
            "--prometheus-token-env",
            metavar="NAME",
            help="The environment variable holding a bearer token for --prometheus.",
        ),
        click.option(
            "--prometheus-basic-auth-env",
            metavar="NAME",
            help="The environment variable holding user:password for --prometheus.",
        ),
    ]
    with_source = option_group("source", UsageSource, options)(f)
    return since_option(with_source)


since_option = click.option(
    "--since",
    metavar="WINDOW",
    default="7d",
    show_default=True,
    help="The window: this long back from the newest sample (7d, 12h, 90m).",
)


@click.command("usage", epilog=EXAMPLES["usage"])
@usage_source_options
@targeting_options
@format_option(["text", "json", "markdown"], "Output format (markdown for a pull request).")
@timeout_option("usage")
def command(source: UsageSource, since: str, where: TargetingArgs, fmt: str) -> None:
    """Show each principal's observed rates per broker against its effective quota."""
    from kquota.usage.window import parse_since

    window = parse_since(since)
    source.check()
    from kquota.operations.usage import read_usage

    report, _ = read_usage(where.resolve(), source, since_ms=window)
    if fmt == "json":
        import orjson

        click.echo(orjson.dumps(report.to_data(), option=orjson.OPT_INDENT_2).decode())
        return
    for w in report.warnings:
        click.echo(f"warning: {w}", err=True)
    if fmt == "markdown":
        from kquota.render.usage import render_usage_markdown

        click.echo(render_usage_markdown(report), nl=False)
    else:
        from kquota.render.usage import render_usage_text

        console.echo(render_usage_text(report), console.resolution_colors)
