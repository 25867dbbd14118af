"""The reference pages made from the code they describe: ``python -m docgen`` writes them, and a
test fails when one is stale."""

from __future__ import annotations

from pathlib import Path

REFERENCE = Path(__file__).parents[1] / "docs" / "reference"


def pages() -> dict[Path, str]:
    """Every generated page by its path, as ``python -m docgen`` writes it."""
    from docgen import api, cli, configuration

    found = {
        REFERENCE / "configuration.md": configuration.render(),
        REFERENCE / "api.md": api.render(),
    }
    found |= {REFERENCE / "cli" / name: text for name, text in cli.render().items()}
    return found
