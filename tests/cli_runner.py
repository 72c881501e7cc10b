"""Run the kquota CLI in-process as the installed script would: exit code, stdout, stderr."""

from __future__ import annotations

import pytest

from kquota.cli.main import main


def run_kquota(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """run_kquota runs ``kquota ARGV`` through ``main`` (errors become messages + exit codes)."""
    try:
        # As the console script does (sys.exit(main())): a command ending in click's Exit
        # (validate's 1) returns its code instead of raising.
        code = int(main(argv) or 0)
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
