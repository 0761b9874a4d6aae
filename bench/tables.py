"""Result tables: one `Table` value per benchmark section, rendered as Markdown text.

A cell is a number (formatted here, so every section rounds the same way), a string (e.g.
"n/a (generate unavailable)") or None (rendered "—"). Notes carry the sources of published figures
and the caveats of a measurement; they are printed under the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Cell = Any


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = ()
    #: raw, unrounded data of the section (written to results.json, read by the plots)
    data: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"title": self.title, "columns": list(self.columns),
                "rows": [list(r) for r in self.rows], "notes": list(self.notes), "data": self.data}

    @classmethod
    def from_json(cls, key: str, d: dict) -> Table:
        """The table as results.json holds it (what `to_json` wrote)."""
        return cls(key, d["title"], tuple(d["columns"]), tuple(tuple(r) for r in d["rows"]),
                   tuple(d.get("notes", ())), d.get("data", {}))


def number(t: Table) -> tuple[int, str]:
    """The table's place in bench/RESULTS.md: "Table 6b — …" → (6, "b")."""
    m = re.match(r"Table (\d+)([a-z]?)", t.title)
    return (int(m.group(1)), m.group(2)) if m else (10 ** 6, t.title)


def fmt(v: Cell) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1e5:
            return f"{v:,.0f}"
        if a >= 100:
            return f"{v:,.1f}"
        if a >= 1:
            return f"{v:.2f}"
        if a >= 0.01:
            return f"{v:.3f}"
        return f"{v:.2e}"
    return str(v)


def render(t: Table) -> str:
    """The table as Markdown: a heading, the grid, then its notes."""
    cells = [[fmt(c) for c in row] for row in t.rows]
    head = "| " + " | ".join(t.columns) + " |"
    sep = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(t.columns))) + "|"
    body = ["| " + " | ".join(r) + " |" for r in cells]
    out = [f"### {t.title}", "", head, sep, *body]
    if t.notes:
        out.append("")
        out.extend(f"- {n}" for n in t.notes)
    return "\n".join(out) + "\n"
