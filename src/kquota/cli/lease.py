"""``kquota lease status`` and ``kquota lease release``: the apply lease, seen and freed by hand.

Targeting as every live command (``--cluster`` through kquota.yaml, or ``--bootstrap-server``
with ``--command-config``), under one ``--timeout``. ``release`` is Terraform's
``force-unlock``: without ``--force`` it frees a claim made by this user on this host whose
process is gone; ``--force ID`` frees the named claim whoever made it. Either asks first on a
terminal, and needs ``--auto-approve`` without one, as apply does.
"""

from __future__ import annotations

import sys

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, live_targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.display import safe_text
from kquota.errors import KquotaError, UsageError
from kquota.runtime.deadline import current


def _config(where: TargetingArgs) -> dict[str, str]:
    from kquota.apply.lease import lease_config

    target = where.resolve(require_source=False)
    if target.cluster is None and target.bootstrap_server is None:
        raise UsageError(
            "which cluster's apply lease? give --cluster NAME (from kquota.yaml) or "
            "--bootstrap-server HOST:PORT (with --command-config FILE for credentials)"
        )
    return lease_config(target.client_properties())


@click.group("lease", epilog=EXAMPLES["lease"])
def command() -> None:
    """The apply lease: who holds it, and freeing a dead holder's claim."""


@command.command("status", epilog=EXAMPLES["lease status"])
@live_targeting_options
@timeout_option("lease")
def status(where: TargetingArgs) -> None:
    """Show who holds the apply lease: claim id, holder, since and until (UTC)."""
    from kquota.apply.lease_admin import lease_state, status_lines

    limit = current()
    assert limit is not None
    for line in status_lines(lease_state(_config(where), limit)):
        click.echo(line)


@command.command("release", epilog=EXAMPLES["lease release"])
@live_targeting_options
@click.option(
    "--force",
    "force_id",
    metavar="ID",
    help="Release the claim with this id (shown by `kquota lease status`), whoever made it.",
)
@click.option("--auto-approve", is_flag=True, help="Release without asking (CI, no terminal).")
@timeout_option("lease")
def release(where: TargetingArgs, force_id: str | None, auto_approve: bool) -> None:
    """Release the apply lease: your own dead apply's claim, or with --force a named claim.

    An apply still running under a released claim stops before its next batch.
    """
    from kquota.apply.lease_admin import holder_alive, is_own, lease_state, release_claim

    if not auto_approve and not sys.stdin.isatty():
        raise UsageError(
            "not releasing the apply lease without confirmation: there is no terminal to ask "
            "on; check `kquota lease status` and pass --auto-approve"
        )
    limit = current()
    assert limit is not None
    config = _config(where)
    state = lease_state(config, limit)
    holder = state.holder
    if holder is None:
        click.echo(f"the apply lease on topic {state.topic} is free: nothing to release")
        return
    if force_id is not None and force_id != holder.owner:
        raise KquotaError(
            f"--force {safe_text(force_id)}: that claim does not hold the apply lease; it is "
            f"held by {holder.who} (claim {holder.claim})"
        )
    if force_id is None:
        if not is_own(holder):
            raise KquotaError(
                f"the apply lease is held by {holder.who} (claim {holder.claim}), not by you: "
                f"if that apply is gone, release it with --force {holder.claim}"
            )
        if holder_alive(holder):
            raise KquotaError(
                f"the apply lease is held by pid {holder.info.get('pid')} on this host, which "
                "is still running: it releases the lease when it ends (or stop it first; "
                f"--force {holder.claim} frees it anyway)"
            )
    if not auto_approve and not click.confirm(
        f"Release the apply lease held by {holder.who} (claim {holder.claim})? "
        "An apply still running under it stops before its next batch",
        default=False,
        err=True,
    ):
        raise click.Abort()
    after = release_claim(config, limit, holder.owner)
    if after.holder is not None and after.holder.owner == holder.owner:
        raise KquotaError(f"claim {holder.claim} still holds the apply lease after the release")
    click.echo(f"released the apply lease held by {holder.who} (claim {holder.claim})")
    if after.holder is not None:
        click.echo(f"it is now held by {after.holder.who} (claim {after.holder.claim})")
