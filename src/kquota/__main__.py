"""``python -m kquota``: the ``kquota`` command, for a Python without the console script on
its PATH (a venv that is not activated, ``pipx run --spec kquota python -m kquota``)."""

import sys

from kquota.cli.main import main

if __name__ == "__main__":
    # main returns the exit code of a command that ended with click's Exit (validate's 1,
    # plan's 2); the console script passes it on, so this must too.
    sys.exit(main())
