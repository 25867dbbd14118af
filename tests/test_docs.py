"""The docs a user reads: the generated reference is current, and no page is too long to read."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from docgen import REFERENCE, pages

ROOT = Path(__file__).parents[1]


def test_the_generated_reference_is_current() -> None:
    """Configuration and CLI pages say what the code says: regenerate with python -m docgen."""
    made = pages()
    on_disk = set(REFERENCE.rglob("*.md"))
    assert on_disk == set(made), "stale reference pages: run python -m docgen"
    for path, text in made.items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run python -m docgen"


def test_every_setting_is_in_the_configuration_reference() -> None:
    from relay_server.settings import options

    page = (REFERENCE / "configuration.md").read_text()
    for option in options():
        assert f"| `{option.env}` |" in page


def test_no_page_is_over_30_kb() -> None:
    for page in [ROOT / "README.md", *ROOT.joinpath("docs").rglob("*.md")]:
        assert page.stat().st_size <= 30_000, page.relative_to(ROOT)


def test_the_readme_is_a_front_door() -> None:
    """At most 1,200 words, code blocks included, as a reader counts them."""
    words = re.findall(r"\S+", (ROOT / "README.md").read_text())
    assert len(words) <= 1_200, len(words)


def test_the_site_builds_strictly_with_every_link_and_anchor_found(tmp_path: Path) -> None:
    """mkdocs.yml's pages, as ``mkdocs build --strict`` makes them: a link to a page or an
    anchor that is not there, or a page left out of the navigation, fails the build."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "reference" / "configuration" / "index.html").exists()


def test_the_readmes_links_lead_somewhere() -> None:
    """The README is read on a forge, outside the site: each relative link is a file here."""
    for page in ("README.md", "CONTRIBUTING.md", "SECURITY.md"):
        for target in re.findall(r"\]\(([^)#\s]+)", (ROOT / page).read_text()):
            if "://" not in target:
                assert (ROOT / target).exists(), (page, target)
        for target in re.findall(r'src="([^"]+)"', (ROOT / page).read_text()):
            assert (ROOT / target).exists(), (page, target)
