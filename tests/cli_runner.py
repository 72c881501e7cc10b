"""Run the kquota CLI in-process as the installed script would: exit code, stdout, stderr."""

from __future__ import annotations

import pytest

from kquota.cli.main import main


def run_kquota(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """run_kquota runs ``kquota ARGV`` through ``main`` (errors become messages + exit codes)."""
    try:
        main(argv)
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
