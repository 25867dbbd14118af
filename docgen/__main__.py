"""``python -m docgen``: write the reference pages made from the code (docs/reference/)."""

from __future__ import annotations

import shutil

from docgen import REFERENCE, pages

if __name__ == "__main__":
    shutil.rmtree(REFERENCE / "cli", ignore_errors=True)  # a group gone leaves no page behind
    for path, text in pages().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(path)
