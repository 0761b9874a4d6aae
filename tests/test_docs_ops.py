"""The table of exporters and operators in docs/inputs.md ("Exporters and operators") is the
frontends' own tables (report/ops.py ops_markdown), as issue 24 asks."""

from pathlib import Path

from tilewise.report.ops import ops_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "inputs.md"


def test_docs_list_what_the_frontends_accept():
    text = DOC.read_text()
    start = text.index("-->", text.index("<!-- ops:start")) + len("-->")
    block = text[start:text.index("<!-- ops:end -->")].strip()
    assert block == ops_markdown(), "regenerate the table in docs/inputs.md:\n" + ops_markdown()


def test_every_frontend_style_has_its_exporter():
    rows = [r.split("|") for r in ops_markdown().splitlines()[2:]]
    assert rows and all(r[2].strip() for r in rows), [r[1:4] for r in rows if not r[2].strip()]
