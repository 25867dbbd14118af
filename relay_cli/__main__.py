"""``python -m relay_cli``: the same as the ``relay`` command."""

from relay_cli.entry import run

run()
