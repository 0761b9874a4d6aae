"""Targets carry the chip's real memory regions, the linker scripts are generated from them, and a
network that does not fit the chip is refused before any work with the region named (issue 25,
item 2).

stm32h7's L2 is its AXI SRAM (512 kB at 0x24000000, ST DS12110 / RM0433), not 1 MB: a network
whose activations need more is refused by analyze, generate and validate (--on qemu too) in one
sentence naming the AXI SRAM, exit 2; the generated link_stm32h7.ld / link_qemu.ld hold the same
regions. gap8 reserves L2 for the code and runtime the GAP SDK links there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tilewise.targets.base import KB
from tilewise.targets.registry import get_target

from .conftest import REPO, mlperf_path


def _big_model(tmp: Path) -> Path:
    """A conv whose input (147,456 B) and output (589,824 B) are live at once: 720 kB, more than
    the AXI SRAM's 512 kB and less than the 1 MB stm32h7 claimed."""
    from .onnx_models import Net, quantize

    n = Net("big", (1, 3, 192, 256))
    y = n.flatten(n.gap(n.relu(n.conv("x", 12))))
    return quantize(n.model([y]), tmp / "big.onnx")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilewise.cli", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=600)


def test_stm32h7_memories_are_its_datasheet_regions():
    t = get_target("stm32h7")
    want = {"flash": (0x08000000, 2048), "L1": (0x20000000, 128), "L2": (0x24000000, 512),
            "data": (0x30000000, 288)}
    for level, (origin, kb) in want.items():
        r = t.region(level)
        assert r is not None and (r.origin, r.size) == (origin, kb * KB), (level, r)
    for level in ("L1", "L2", "flash"):
        assert t.memory(level).size == t.region(level).size
    assert t.memory("L2").free == 512 * KB and "AXI SRAM" in t.memory("L2").note
    from tilewise.targets import stm32h7

    assert "DS12110" in stm32h7.__doc__ and "RM0433" in stm32h7.__doc__
    assert "SRAM1–3" in stm32h7.__doc__ and "do not use the other SRAMs" in stm32h7.__doc__


def test_model_over_the_axi_sram_is_refused_before_any_work(tmp_path):
    """analyze, generate and validate --on qemu: exit 2, one sentence naming the AXI SRAM and its
    address; generate writes no project."""
    model = _big_model(tmp_path)
    runs = {"analyze": _cli("analyze", str(model), "--target", "stm32h7"),
            "generate": _cli("generate", str(model), "--target", "stm32h7", "-o",
                             str(tmp_path / "p")),
            "validate": _cli("validate", str(model), "--target", "stm32h7", "--on", "qemu",
                             "--inputs", "1")}
    for what, proc in runs.items():
        assert proc.returncode == 2, (what, proc.stdout[-500:], proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, (what, proc.stderr)
        assert "AXI SRAM (512 kB at 0x24000000)" in proc.stderr, (what, proc.stderr)
        assert "720.0 kB" in proc.stderr and "does not fit the chip" in proc.stderr, proc.stderr
    assert not (tmp_path / "p").exists()
    # the same network fits a hypothetical part with more L2 (the check reads the L2 given)
    ok = _cli("analyze", str(model), "--target", "stm32h7", "--l2", "1024", "--hypothetical")
    assert ok.returncode == 0, ok.stderr


def test_linker_scripts_are_generated_from_the_regions(tmp_path):
    from tilewise.codegen.linker import link_scripts

    t = get_target("stm32h7")
    scripts = link_scripts(t)
    memory = {}
    for line in scripts["firmware/link_stm32h7.ld"].splitlines():
        m = re.match(r"\s+(\w+)\s+\(\w+\)\s*: ORIGIN = 0x([0-9A-F]+), LENGTH =\s+(\d+)K", line)
        if m:
            memory[m.group(1)] = (int(m.group(2), 16), int(m.group(3)) * KB)
    assert memory == {r.ld: (r.origin, r.size) for r in t.regions}
    qemu = scripts["firmware/link_qemu.ld"]
    for r in (t.region("flash"), t.region("L1"), t.region("L2"), t.region("data")):
        assert re.search(rf"\b{r.ld}\s+\(\w+\)\s*: ORIGIN = 0x[0-9A-F]+, LENGTH =\s+"
                         rf"{r.size // KB}K", qemu), (r, qemu)
    assert "STACK_BYTES = 8192;" in qemu and 'REGION_ALIAS("L2_RAM", AXI_SRAM);' in qemu


def test_gap8_reserves_l2_for_code_and_runtime():
    """gap8's free L2 is 512 kB less the code and runtime the GAP SDK links into L2; the reserve
    holds the network's code as measured on the same cores (pulp-open's firmware of kws_dscnn)."""
    l2 = get_target("gap8").memory("L2")
    assert l2.size == 512 * KB and l2.reserved >= 64 * KB and l2.free == 416 * KB
    proc = _cli("analyze", str(mlperf_path("kws_dscnn")), "--target", "pulp-open", "--code-size",
                "--json")
    assert proc.returncode == 0, proc.stderr
    code = json.loads(proc.stdout)["totals"]["memory_summary"]["code_bytes"]
    assert 0 < code < l2.reserved, code
    gap9 = get_target("gap9").memory("L2")
    assert gap9.reserved >= l2.reserved and gap9.free == 1408 * KB


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_override_beyond_a_region_is_refused(level):
    """--l1 / --l2 beyond the region's free bytes is refused as before (the figures are the
    region's now)."""
    proc = _cli("analyze", str(mlperf_path("kws_dscnn")), "--target", "stm32h7",
                f"--{level.lower()}", "2000")
    assert proc.returncode == 2 and ("512 kB" in proc.stderr or "128 kB" in proc.stderr), \
        proc.stderr
