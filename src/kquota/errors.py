"""User-facing errors. Anything raised as a KquotaError is printed as one clear message with
a non-zero exit code by the CLI, never as a traceback."""

from __future__ import annotations


class KquotaError(Exception):
    """KquotaError is an error the user can act on; its message is the whole story."""

    exit_code = 1
    # What was warned on the way to the error (a desired-state load's look-alike files):
    # printed before the error, as it would have been had the command gone on.
    warnings: tuple[object, ...] = ()


LEASE_LOST = "the apply lease was lost"
"""How :class:`kquota.apply.lease.LeaseLost` messages begin: the apply report tells by it a
stop from a broken connection (one text the lease writes and the report reads, below both)."""


class UsageError(KquotaError):
    """UsageError: the command line or a config file asks for something impossible."""

    exit_code = 1


class AlterationFailed(KquotaError):
    """AlterationFailed: the broker rejected an entity's alteration; the message is the broker's
    (see :meth:`kquota.AlterResult.raise_for_error`)."""

    exit_code = 1
