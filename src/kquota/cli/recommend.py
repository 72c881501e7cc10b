"""``kquota recommend``: quotas sized from observed demand, as a desired-state overlay.

Prints (or with ``--format``, renders) the proposals and writes the patch to ``--out``, never
replacing a file without ``--force``; without ``--out`` the patch follows the text report on
standard output (in markdown, as a fenced block; in JSON, the ``patch`` field). Nothing is
applied: ``kquota plan QUOTAS/ PATCH`` is the review.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.impact_options import parse_protect
from kquota.cli.options import TargetingArgs, format_option, targeting_options
from kquota.cli.output import refuse_existing, refuse_inputs, write_output
from kquota.cli.timeout_option import timeout_option
from kquota.cli.usage import usage_source_options
from kquota.errors import KquotaError, UsageError
from kquota.operations.usage import UsageSource
from kquota.usage.recommend import DEFAULT_KEYS, RecommendOptions
from kquota.usage.window import parse_since

F = TypeVar("F", bound=Callable[..., Any])


_SIZING = (
    click.option(
        "--percentile",
        metavar="P",
        default="99",
        show_default=True,
        help="The per-broker percentile of each principal's rate that is sized (nearest-rank).",
    ),
    click.option(
        "--headroom",
        type=click.FloatRange(min=1.0, max=100.0),
        default=1.5,
        show_default=True,
        help="Multiplier on the percentile (at least 1).",
    ),
    click.option(
        "--min-window",
        metavar="WINDOW",
        default="7d",
        show_default=True,
        help="A principal observed for less than this gets no proposal (7d, 12h).",
    ),
    click.option(
        "--keys",
        metavar="KEY,...",
        default=",".join(DEFAULT_KEYS),
        show_default=True,
        help="The quota keys to size, comma-separated.",
    ),
    click.option(
        "--protect",
        multiple=True,
        metavar="TYPE=NAME",
        help="Protected principals besides the policy's (repeatable; globs): never lowered.",
    ),
)


def sizing_options(f: F) -> F:
    """sizing_options adds --percentile, --headroom, --min-window, --keys and --protect (the
    sizing flags of recommend and fleet recommend)."""
    for option in reversed(_SIZING):
        f = option(f)
    return f


def sizing(percentile: str, headroom: float, min_window: str, keys: str) -> RecommendOptions:
    """sizing is the recommendation options the sizing flags give."""
    from kquota.usage.profile import parse_percentile

    return RecommendOptions(
        percentile=parse_percentile(percentile),
        headroom=headroom,
        min_window_ms=_window(min_window),
        keys=_keys(keys),
    )


@click.command("recommend", epilog=EXAMPLES["recommend"])
@usage_source_options
@targeting_options
@sizing_options
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the patch (a ClientQuotasOverlay) to this file.",
)
@click.option("--force", is_flag=True, help="Replace the --out file if it exists (never an input).")
@format_option(["text", "json", "markdown"], "Output format of the proposals.")
@timeout_option("recommend")
def command(
    source: UsageSource,
    since: str,
    where: TargetingArgs,
    percentile: str,
    headroom: float,
    min_window: str,
    keys: str,
    protect: tuple[str, ...],
    out: Path | None,
    force: bool,
    fmt: str,
) -> None:
    """Propose quotas from observed usage, as desired state for kquota plan to review."""
    options = sizing(percentile, headroom, min_window, keys)
    window = parse_since(since)
    matches = tuple(parse_protect(p) for p in protect)
    source.check()
    refuse_inputs(out, [*where.inputs(), *(("--samples", p) for p in source.samples)])
    refuse_existing(out, force)
    from kquota.operations.recommend import recommend_quotas

    found = recommend_quotas(
        where.resolve(), source, since_ms=window, options=options, protect=matches
    )
    rec = found.recommendation
    if fmt == "json":
        import orjson

        data = rec.to_data()
        if out is None:
            data["patch"] = found.text
        click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        for w in rec.warnings:
            click.echo(f"warning: {w}", err=True)
        if fmt == "markdown":
            from kquota.render.usage import render_recommend_markdown

            click.echo(render_recommend_markdown(rec, None if out else found.text), nl=False)
        else:
            from kquota.render.usage import render_recommend_text

            click.echo(render_recommend_text(rec), nl=False)
        if out is None and fmt == "text":
            click.echo("")
            click.echo(found.text, nl=False)
    if out is not None:
        write_output(out, found.text, overwrite=force)
    if found.left_out:
        for line in found.left_out:
            click.echo(f"warning: not in the patch: {line}", err=True)
        raise KquotaError(
            f"{len(found.left_out)} proposal(s) left out of the patch: desired state cannot "
            "declare them (see the warnings above)"
        )


def _window(text: str) -> int:
    try:
        return parse_since(text)
    except UsageError:
        raise UsageError(
            f"--min-window {text[:40]!r}: not a window; use days (7d) or a duration (12h)"
        ) from None


def _keys(text: str) -> tuple[str, ...]:
    from kquota.usage.rows import RATE_METRICS

    allowed = tuple(RATE_METRICS.values())
    keys = tuple(dict.fromkeys(k.strip() for k in text.split(",") if k.strip()))
    bad = [k for k in keys if k not in allowed]
    if bad or not keys:
        raise UsageError(
            f"--keys {text[:80]!r}: {'unknown key ' + repr(bad[0]) if bad else 'no key'}; "
            f"allowed: {', '.join(allowed)} (the keys the brokers measure)"
        )
    return keys
