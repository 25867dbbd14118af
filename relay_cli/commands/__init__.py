"""One module per resource, each a Typer app added to the root with ``add_typer``."""
