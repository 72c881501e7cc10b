"""``python -m kquota``: the ``kquota`` command, for a Python without the console script on
its PATH (a venv that is not activated, ``pipx run --spec kquota python -m kquota``)."""

from kquota.cli.main import entry

if __name__ == "__main__":
    # As the console script: main's exit status (validate's 1, plan's 2) is passed on.
    entry()
