"""``python -m relay_cli``: the same as the ``relay`` command."""

from relay_cli.root import run

run()
