"""User-facing errors. Anything raised as a KquotaError is printed as one clear message with
a non-zero exit code by the CLI, never as a traceback."""

from __future__ import annotations


class KquotaError(Exception):
    """KquotaError is an error the user can act on; its message is the whole story."""

    exit_code = 1


class UsageError(KquotaError):
    """UsageError: the command line or a config file asks for something impossible."""

    exit_code = 1
