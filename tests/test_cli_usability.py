"""Issue 13's CLI usability (defect 10's CLI part, progress): --version, `tilewise ops`,
case-insensitive target names, --quiet and the progress module. The CLI runs as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

EXAMPLE = str(Path(__file__).resolve().parent.parent / "tilewise" / "examples" / "example_cnn.onnx")


def run_cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilewise.cli", *args], capture_output=True,
                          text=True, timeout=300, **kw)


def test_version_is_the_package_version():
    """Defect 10: `--version` did not exist."""
    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"tilewise {version('tilewise')}"


@pytest.mark.parametrize("name", ["GAP8", "Gap8", "STM32H7", "Pulp-Open"])
def test_target_names_are_case_insensitive(name):
    """Defect 10: target names were case-sensitive."""
    proc = run_cli("analyze", EXAMPLE, "--target", name, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["totals"]["target"] == name.lower()


def test_ops_lists_every_op_the_frontends_accept():
    """`tilewise ops`: every TFLite builtin the converter table takes and every public ONNX op the
    lowering handles appears; an op the frontends refuse (HARD_SWISH, Einsum) does not."""
    from tilewise.frontend import onnx as _onnx  # noqa: F401
    from tilewise.frontend.onnx_int import INTEGER_OPS
    from tilewise.frontend.onnx_lower import HANDLERS
    from tilewise.frontend.onnx_quantlab import DEPLOYED_OPS
    from tilewise.frontend.tflite_fold import FOLDERS
    from tilewise.frontend.tflite_ops import CONVERTERS

    proc = run_cli("ops", "--json")
    assert proc.returncode == 0, proc.stderr
    groups = json.loads(proc.stdout)["frontends"]
    tfl = {op for g in groups if g["frontend"] == "tflite" for op in g["ops"]}
    onnx_ops = {op for g in groups if g["frontend"] == "onnx" for op in g["ops"]}
    assert set(CONVERTERS) | set(FOLDERS) == tfl
    assert set(INTEGER_OPS) | set(DEPLOYED_OPS) <= onnx_ops
    public = {n for n in HANDLERS if n.startswith(("QLinear", "QGemm")) or n in
              ("MaxPool", "Reshape", "Flatten", "Transpose", "Concat", "Identity", "Dropout")}
    assert public <= onnx_ops
    assert {"QuantizeLinear", "DequantizeLinear", "Conv", "RequantShift", "Floor", "Cast"} <= onnx_ops
    assert "HARD_SWISH" not in tfl and "Einsum" not in onnx_ops and "Tanh" not in onnx_ops
    # the frontend's own rewritten forms are no ONNX operators a user can write
    assert not {"IntConv", "Requant", "QlRequantShift", "TwDoryAdd"} & onnx_ops
    text = run_cli("ops")
    assert text.returncode == 0 and "CONV_2D" in text.stdout and "QLinearConv" in text.stdout
    # the text fits 100 columns, with a target's kernel lists too (wrapped, not cut)
    wide = run_cli("ops", "--target", "gap9").stdout
    assert max(map(len, (text.stdout + wide).splitlines())) <= 100
    assert "conv2d_sb_x4w2y4_shift" in wide.replace("\n    ", " ")


def test_refused_op_is_refused_by_the_frontend(tmp_path):
    """The op `ops` leaves out is one the frontend refuses (the listing is not too short by
    accident: HARD_SWISH really is refused)."""
    from .tflite_builder import hard_swish_model

    p = hard_swish_model(tmp_path / "hswish.tflite")
    assert run_cli("analyze", str(p)).returncode == 2


def test_ops_with_a_target_lists_its_modules_kernels_and_precisions():
    from tilewise.targets.registry import get_target

    proc = run_cli("ops", "--target", "GAP9", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["target"] == "gap9"
    rows = {(r["op"], r["module"]): r for r in d["ir_ops"]}
    t = get_target("gap9")
    for m in t.modules:
        for b in m.bindings:
            r = rows[(b.key.op, m.name)]
            assert b.name in r["kernels"] and str(b.key.precision) in r["precisions"]
    assert "8x8->8" in rows[("conv2d", "ne16")]["precisions"]
    assert ("conv2d", "ne16") in rows and ("transpose_conv", "ne16") not in rows
    bad = run_cli("ops", "--target", "nope")
    assert bad.returncode == 2 and "unknown target 'nope'" in bad.stderr


# --- progress bars (rich) on a terminal's stderr, --quiet ------------------------------------------

def run_on_terminal(*args: str, timeout: float = 600) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal (stdout a pipe); returns (rc, stdout, what
    the terminal received)."""
    import os
    import pty
    import threading

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tilewise.cli", *args], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=timeout)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal_and_quiet():
    """Scheduling shows a bar on a terminal's stderr; --quiet (before or after the command)
    removes it; stdout is the same either way."""
    rc, out, term = run_on_terminal("analyze", EXAMPLE, "--target", "gap8", "--json")
    assert rc == 0 and "scheduling layers" in term
    for quiet in (("--quiet", "analyze"), ("analyze", "--quiet")):
        rc_q, out_q, term_q = run_on_terminal(*quiet, EXAMPLE, "--target", "gap8", "--json")
        assert rc_q == 0 and term_q == "" and out_q == out


def test_validate_progress_on_a_terminal(tmp_path):
    """validate shows scheduling and building on a terminal; the report on stdout is the one a
    pipe gets."""
    rc, out, term = run_on_terminal("validate", EXAMPLE, "--target", "gap8", "--inputs", "2",
                                    "--json", "-o", str(tmp_path / "a"))
    assert rc == 0, term
    assert "scheduling layers" in term and "building" in term
    piped = run_cli("validate", EXAMPLE, "--target", "gap8", "--inputs", "2", "--json", "-o",
                    str(tmp_path / "b"))
    assert piped.returncode == 0   # no progress off a terminal: stderr only says where the report went
    assert all(line.startswith("tilewise: wrote the report to ")
               for line in piped.stderr.splitlines()), piped.stderr
    a, b = json.loads(out), json.loads(piped.stdout)
    assert {k: v for k, v in a.items() if k != "project"} == {k: v for k, v in b.items()
                                                              if k != "project"}
    # own data runs through the chunk loop: its bar counts the chunks of inputs run
    data = str(Path(EXAMPLE).parent / "example_inputs.npz")
    rc, _, term = run_on_terminal("validate", EXAMPLE, "--target", "gap8", "--data", data,
                                  "--json")
    assert rc == 0 and "running inputs (chunks)" in term, term


def test_no_progress_off_a_terminal():
    """Off a terminal nothing is drawn and rich is not even imported by the progress module."""
    proc = run_cli("analyze", EXAMPLE, "--target", "gap8", "--json")
    assert proc.returncode == 0 and proc.stderr == ""
    probe = subprocess.run([sys.executable, "-c",
                            "import sys; from tilewise.progress import progress\n"
                            "with progress(3, 'x') as step: step()\n"
                            "print('rich' in ' '.join(sys.modules))"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "False", probe.stderr


def test_nested_progress_in_process(monkeypatch):
    """Nested bars (building inside validate) share one display (rich allows one at a time)."""
    import io

    from tilewise import progress as pg

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    pg.set_quiet(False)
    with pg.progress(2, "outer") as outer:
        with pg.progress(3, "inner") as inner:
            inner()
            inner(2)
        outer()
    assert pg._active is None
    pg.set_quiet(True)
    assert not pg.enabled()
    pg.set_quiet(False)


def test_targets_list_their_maximum_clock():
    """Every built-in target carries its rated maximum clock (cited in targets/<chip>.py), at or
    above its default clock; `targets --json` shows it."""
    proc = run_cli("targets", "--json")
    assert proc.returncode == 0, proc.stderr
    for t in json.loads(proc.stdout):
        assert t["max_clock_mhz"] is not None and t["max_clock_mhz"] >= t["clock_mhz"], t["name"]
