"""``python -m relay_cli``: the same as the ``relay`` command."""

from relay_cli.main import app

app(prog_name="relay")
