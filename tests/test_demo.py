"""`tilewise demo` (the README's `make demo`): analyze, generate, build and validate the bundled
example model; it must print bit-exact reports and exit 0."""

from __future__ import annotations

import re

from tilewise.cli import main as cli_main
from tilewise.errors import TilewiseError
from tilewise.platforms.gvsoc import runner
from tilewise.platforms.pulp_open import toolchain

from .conftest import absent


def _gvsoc_here() -> str | None:
    """None where GVSoC and the RISC-V toolchain are installed, else what is missing."""
    try:
        runner()
        toolchain()
    except TilewiseError as e:
        return str(e)
    return None


def test_demo_prints_a_bit_exact_report(tmp_path, capsys):
    """gap8 at its L1 and at 8 kB on the host, then pulp-open on GVSoC: issue 27's example at
    >= 3 MAC/cycle, predicted and measured, printed by the demo."""
    missing = _gvsoc_here()
    assert cli_main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "tilewise analyze" in out                       # the schedule table
    if missing:
        assert out.count("result:      BIT-EXACT") == 2    # default L1 and 8 kB
        assert "not run on GVSoC" in out
        absent(f"the demo's pulp-open step needs GVSoC: {missing}")
    assert out.count("result:      BIT-EXACT") == 3        # default L1 and 8 kB, pulp-open
    line = re.search(r"pulp-open: 508,224 MACs in ([\d,]+) cycles measured on GVSoC = ([\d.]+) "
                     r"MAC/cycle \(predicted ([\d,]+) cycles = ([\d.]+) MAC/cycle\)", out)
    assert line, out[-2000:]
    assert float(line.group(2)) >= 3.0 and float(line.group(4)) >= 3.0, line.group(0)
    assert (tmp_path / "example_cnn_pulp_open" / "build_fw" / "network.elf").exists()
    assert "onnxruntime" in out and "MISMATCH" not in out
    assert "measured per inference = " in out
    assert "demo: bit-exact" in out
    for d in ("example_cnn_gap8", "example_cnn_gap8_l1_8k"):
        assert (tmp_path / d / "network_host").exists()
        assert (tmp_path / d / "layers" / "layer_00.c").exists()
