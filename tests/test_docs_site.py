"""The documentation: the README is a front page (issue 26: at most 150 lines, its links resolve,
every page of the site is reachable from it), and the site in docs/ builds with
`mkdocs build --strict` (mkdocs.yml: a broken link or anchor, or a page outside the nav, is a
warning, and strict turns any warning into a failed build)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import results_md
from tests.conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
#: docs pages the README need not link: the site's home, and the page that includes bench/RESULTS.md
#: (the README links the file itself)
NOT_LINKED = {"index.md", "performance.md"}


def _mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    for module in ("mkdocs", "material"):
        if __import__("importlib.util").util.find_spec(module) is None:
            pytest.fail(f"{module} is not installed: `pip install -e '.[dev]'` installs mkdocs-material")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # cwd = root: the snippets extension reads bench/RESULTS.md relative to it (mkdocs.yml base_path)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(root / "mkdocs.yml"), "--site-dir", str(site)],
                          cwd=root, capture_output=True, text=True, timeout=300, env=env)


def test_site_builds_strict_with_every_page(tmp_path):
    proc = _mkdocs_build(REPO, tmp_path / "site")
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    assert "WARNING" not in log, log
    for page in sorted(DOCS.glob("*.md")):
        out = "index.html" if page.stem == "index" else f"{page.stem}/index.html"
        assert (tmp_path / "site" / out).is_file(), page.name
    # the benchmark page is bench/RESULTS.md itself, tables included
    perf = (tmp_path / "site" / "performance" / "index.html").read_text()
    assert "Table 1 — host execution" in perf and "Table 10 —" in perf


def test_strict_build_fails_on_a_broken_link_and_an_orphan_page(tmp_path):
    """The configuration catches what it is there for: a copy of the site with one broken link, one
    broken anchor and one page outside the nav does not build."""
    root = tmp_path / "repo"
    shutil.copytree(DOCS, root / "docs")
    shutil.copy(REPO / "mkdocs.yml", root)
    (root / "bench").mkdir()
    shutil.copy(REPO / "bench" / "RESULTS.md", root / "bench")
    with (root / "docs" / "commands.md").open("a") as f:
        f.write("\n[gone](no_such_page.md) and [there](inputs.md#no-such-anchor)\n")
    (root / "docs" / "orphan.md").write_text("# Orphan\n")
    proc = _mkdocs_build(root, tmp_path / "site")
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, log
    for word in ("no_such_page.md", "no-such-anchor", "orphan.md"):
        assert word in log, (word, log)


def test_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    for heading in ("## Quick start", "## Commands", "## Where to read on"):
        assert heading in text, heading
    assert "make demo" in text and "make test" in text
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    relative = [link for link in links if "://" not in link]
    missing = [link for link in relative if not (REPO / link).exists()]
    assert not missing, missing
    unlinked = {p.name for p in DOCS.glob("*.md")} - NOT_LINKED - {Path(link).name for link in relative}
    assert not unlinked, f"docs pages the README does not point to: {sorted(unlinked)}"
    assert "bench/RESULTS.md" in relative


def test_readme_names_every_command(capsys):
    """One line per command in the README's table: every command `tilewise --help` lists."""
    from tilewise.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    listed = re.search(r"\{([a-z,-]+)\}", capsys.readouterr().out)
    assert listed, "tilewise --help lists no commands"
    table = README.read_text().split("## Commands", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in listed.group(1).split(",") if f"`tilewise {name}" not in table]
    assert not missing, missing


def test_results_page_holds_the_bench_markers():
    """`bench/run.py --results-md` writes between these markers; the page must keep them."""
    text = (REPO / "bench" / "RESULTS.md").read_text()
    assert text.index(results_md.START) < text.index(results_md.END)
