"""Put the latest tables into README.md's "Performance" section (between two marker lines), so the
README shows what `make bench` measured and nobody copies numbers by hand."""

from __future__ import annotations

from pathlib import Path

START = "<!-- bench:latest:start (written by bench/run.py --readme; do not edit by hand) -->"
END = "<!-- bench:latest:end -->"


def update(readme: Path, tables_md: str) -> None:
    """Replace the text between the markers with `tables_md` (its "## Machine" becomes a ### heading under ## Performance)."""
    text = readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{readme}: no '{START}' / '{END}' markers; add them to its Performance section")
    demoted = "\n".join("#" + line if line.startswith("## ") else line for line in tables_md.splitlines())
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{START}\n\n{demoted.strip()}\n\n{END}{tail}")
