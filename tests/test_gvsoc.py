"""pulp-open firmware on GVSoC (../shared/tools/gvsoc): `validate --on gvsoc` end to end.

The generated project's firmware (codegen/firmware.py: crt0, linker script, cluster start, the
bare-metal DMA/fork HAL, a main printing outputs, cycles per layer and DMA counters) runs the
network on the 8-core cluster; the outputs must be bit-exact with the golden model and the
reference runtime, the DMA bytes, transfers and chunks equal to the schedule's, and the report
carries measured and predicted cycles per layer. A trap (an instruction the cores do not decode)
ends the run with a message and a non-zero status instead of restarting forever.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tilewise.codegen import generate
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.platforms.gvsoc import execute as run_firmware
from tilewise.platforms.gvsoc import runner
from tilewise.platforms.pulp_open import compile_args, link_args, toolchain
from tilewise.targets.registry import get_target
from tilewise.validate import validate_model
from tilewise.validate.firmware_run import parse

from .conftest import REPO, absent, mlperf_path


@pytest.fixture(scope="module", autouse=True)
def gvsoc_present():
    try:
        runner()
        toolchain()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


def _check(report):
    r = report.to_json()
    assert r["bit_exact"], r
    assert r["platform"] == "gvsoc" and r["measured_cycles"] > 0 and r["predicted_cycles"] > 0
    assert (r["dma_bytes_measured"], r["dma_transfers_measured"], r["dma_chunks_measured"]) == \
        (r["dma_bytes_predicted"], r["dma_transfers_predicted"], r["dma_chunks_predicted"])
    assert all(l["measured_cycles"] > 0 and l["predicted_cycles"] > 0 for l in r["layers"])
    assert sum(l["measured_cycles"] for l in r["layers"]) <= r["measured_cycles"]
    return r


@pytest.mark.parametrize("l1_kb", [None, 8])
def test_example_bit_exact_on_gvsoc(l1_kb, tmp_path):
    graph = load_model(EXAMPLE_ONNX)
    ns = schedule_network(lower(graph), get_target("pulp-open", l1_kb=l1_kb), "model")
    _check(validate_model(EXAMPLE_ONNX, ns, graph, 1, 0, tmp_path / "p", on="gvsoc"))


@pytest.mark.parametrize("name", ["kws_dscnn", "ic_resnet8"])
def test_mlperf_bit_exact_on_gvsoc(name, tmp_path):
    path = mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("pulp-open"), "model")
    _check(validate_model(path, ns, graph, 1, 1, tmp_path / "p", on="gvsoc"))


def test_cli_validate_on_gvsoc_json(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(EXAMPLE_ONNX),
                           "--target", "pulp-open", "--on", "gvsoc", "--inputs", "1", "--json"],
                          capture_output=True, text=True, timeout=900, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["bit_exact"] and len(r["layers"]) == 8
    assert {"measured_cycles", "predicted_cycles"} <= set(r["layers"][0])
    bad = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(EXAMPLE_ONNX),
                          "--target", "gap8", "--on", "gvsoc"], capture_output=True, text=True,
                         timeout=300, cwd=REPO)
    assert bad.returncode == 2 and "--on gvsoc runs pulp-open firmware" in bad.stderr


def test_project_makefile_builds_the_firmware(tmp_path):
    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("pulp-open"), "model")
    p = generate(ns, tmp_path / "p")
    proc = subprocess.run(["make", "-C", str(p.path), "firmware"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = parse(run_firmware(p.path / "build_fw" / "network.elf"))
    assert run.status == 0 and len(run.outputs) == 1 and "TW_DONE" in run.text


def test_a_trap_ends_the_run_with_its_cause(tmp_path):
    """pv.add.n, which pulp-open's cores do not decode: mcause 11, exit status 99."""
    ns = schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target("pulp-open"), "model")
    p = generate(ns, tmp_path / "p").path
    (p / "firmware" / "main.c").write_text(
        '#include "tw_fw.h"\n'
        "int tw_fw_main(void)\n{\n"
        '    tw_fw_puts("before\\n");\n'
        '    __asm__ volatile(".insn r 0x57, 2, 0, x5, x6, x7");\n'
        "    return 0;\n}\n")
    tc = toolchain()
    fw = p / "firmware"
    objs = []
    for src in (fw / "crt0.S", fw / "tw_fw.c", fw / "main.c", p / "tw_hal" / "tw_hal_pulp_open.c"):
        obj = tmp_path / f"{src.name}.o"
        subprocess.run(compile_args(tc, [p, fw, p / "tw_hal"], src, obj), check=True, cwd=p)
        objs.append(obj)
    elf = tmp_path / "trap.elf"
    subprocess.run(link_args(tc, fw / "link.ld", objs, elf), check=True, cwd=p)
    run = parse(run_firmware(elf, timeout=60))
    assert run.status == 99 and "before" in run.text and "TW_TRAP mcause 11" in run.text
