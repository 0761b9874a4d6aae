"""The Cortex-M4 target stm32l4r5 (MLPerf Tiny's reference MCU): its memory map as the linker sees it,
its firmware built for the Cortex-M4 (not the M7), bit-exact under QEMU's mps2-an386 and counted
in unicorn's Cortex-M4 within the band of its instruction model (stm32h7's coefficients: the same
ARMv7E-M code) and priced by the Cortex-M4 timing model (tests/test_m4_timing.py), and the chip's
own link with its board layer (tw_board_stm32l4r5.c, -Werror).
The four MLPerf Tiny models on QEMU / the counter: bench table 13 (bench/cortex_m4.py)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tilewise.codegen.linker import link_scripts
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.platforms.arm_core import CORTEX_M4
from tilewise.platforms.cortex_m import arm_gcc
from tilewise.platforms.qemu import qemu
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model
from tilewise.validate.firmware import build_firmware, project_platform

from .conftest import absent, mlperf_path


@pytest.fixture(scope="module", autouse=True)
def tools_present():
    try:
        qemu()
        arm_gcc()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


def test_memory_map_is_the_datasheets():
    """SRAM1 / SRAM2 / SRAM3 and the flash at RM0432's addresses in the chip's link script; the
    activation arena (L2) in SRAM3, the scratch and the stack (L1) in SRAM2."""
    t = get_target("stm32l4r5")
    chip = link_scripts(t)["firmware/link_stm32l4r5.ld"]
    for ld, origin, length in (("FLASH", "0x08000000", "2048K"), ("SRAM1", "0x20000000", "192K"),
                               ("SRAM2", "0x20030000", "64K"), ("SRAM3", "0x20040000", "384K")):
        assert re.search(rf"{ld}\s+\(rw?x\)\s*: ORIGIN = {origin}, LENGTH =\s+{length}", chip), ld
    assert 'REGION_ALIAS("L2_RAM", SRAM3);' in chip and 'REGION_ALIAS("L1_RAM", SRAM2);' in chip
    assert t.memory("L2").size == 384 * 1024 and t.clock_mhz == 120.0
    assert sum(r.size for r in t.regions if r.backs != "flash") == 640 * 1024


def test_ad_autoencoder_bit_exact_on_the_cortex_m4(tmp_path):
    """QEMU's mps2-an386 (Cortex-M4) and unicorn's Cortex-M4 run the firmware built with
    -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 (the ELF's build attributes: single-precision hardware float
    only): bit-exact, the counted instructions within ±10% of the instruction model's prediction
    per inference, and the Cortex-M4 model's estimated cycles above them (single issue)."""
    path = mlperf_path("ad_autoencoder")
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("stm32l4r5"), "model")
    runners = {r.on: r for r in ns.target.platform.runners}
    assert runners["qemu"].machine == "mps2-an386" and runners["count"].core == CORTEX_M4
    q = validate_model(path, ns, graph, 2, 0, tmp_path / "q", on="qemu").to_json()
    assert q["bit_exact"] and q["platform"] == "qemu", q
    c = validate_model(path, ns, graph, 1, 0, tmp_path / "c", on="count").to_json()
    assert c["bit_exact"] and c["measured_instructions"] > 0, c
    assert abs(c["predicted_instructions"] / c["measured_instructions"] - 1) <= 0.10, c
    assert c["estimated_cycles"] > c["measured_instructions"], c      # single issue, flash
    assert c["estimated_cycles_model"].startswith("estimated, Cortex-M4 model"), c
    elf = next((tmp_path / "c").rglob("network.elf"))
    attrs = subprocess.run(["arm-none-eabi-readelf", "-A", str(elf)], capture_output=True,
                           text=True, check=True).stdout
    # FPv4-SP: single-precision hardware float only (the Cortex-M7 build's FPv5-D16: SP and DP)
    assert "Tag_ABI_HardFP_use: SP only" in attrs and "Tag_FP_arch: VFPv4-D16" in attrs, attrs



def test_the_chips_own_link_builds(tmp_path):
    """LINK=stm32l4r5: the board layer (120 MHz PLL, boost mode, flash wait states, ART, DWT)
    compiles under -Werror and the image links into the chip's regions; the project's platform
    is its own target's (the Cortex-M4's), not stm32h7's of the same name."""
    from tilewise.codegen import generate
    from tilewise.validate import make_inputs

    path = mlperf_path("ad_autoencoder")
    lg = lower(load_model(path))
    ns = schedule_network(lg, get_target("stm32l4r5"), "model")
    project = generate(ns, tmp_path / "p")
    tc = project_platform(project).toolchain
    assert tc.core == CORTEX_M4 and "-mcpu=cortex-m4" in tc.compile_args([], path, path)
    elf = build_firmware(project, make_inputs(lg, 1, 0)[:1], link="stm32l4r5")
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    assert re.search(r"^[0-9a-f]+ T tw_board_init$", out, re.M), out[:500]
    sections = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True,
                              text=True, check=True).stdout
    arena = re.search(r"\.l2_arena\s+[0-9a-f]+\s+([0-9a-f]+)", sections)
    assert arena and 0x20040000 <= int(arena.group(1), 16) < 0x200A0000, sections
