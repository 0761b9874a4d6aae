"""Put the latest tables into bench/RESULTS.md (between two marker lines), so the results page
shows what `make bench` measured and nobody copies numbers by hand. The documentation site shows
the same file (docs/performance.md includes it)."""

from __future__ import annotations

from pathlib import Path

START = "<!-- bench:latest:start (written by bench/run.py --results-md; do not edit by hand) -->"
END = "<!-- bench:latest:end -->"


def update(page: Path, tables_md: str) -> None:
    """Replace the text between the markers with `tables_md` (its "## Machine" becomes a ### heading
    under the page's "## Latest tables")."""
    text = page.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{page}: no '{START}' / '{END}' markers; add them under its 'Latest tables'")
    demoted = "\n".join("#" + line if line.startswith("## ") else line for line in tables_md.splitlines())
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{START}\n\n{demoted.strip()}\n\n{END}{tail}")
