"""Cortex-M7 firmware under QEMU (mps2-an500): `validate --target stm32h7 --on qemu` end to end.

The generated stm32h7 project's firmware (codegen/firmware.py, firmware/cortex_m: vector table and
reset handler, linker scripts for QEMU's mps2-an500 and for an STM32H7, the single-core HAL,
semihosting output) runs the network on embedded inputs; the outputs must be bit-exact with the
golden model and the reference runtime, and the copies (bytes, transfers, chunks) equal to the
schedule's; `--on count` runs the same image in the instruction-counting emulator and reports
instructions per inference and per layer. A fault ends the run with a message and a non-zero
status. The STM32H7 variant links to the part's flash, DTCM and AXI SRAM.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tilewise.codegen import generate
from tilewise.codegen.firmware import FIRMWARE_C
from tilewise.codegen.linker import write_link_scripts
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.platforms.cortex_m import arm_gcc, cm_compile_args, cm_link_args
from tilewise.platforms.qemu import execute as run_firmware
from tilewise.platforms.qemu import qemu
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs, validate_model
from tilewise.validate.firmware import build_firmware
from tilewise.validate.firmware_run import parse

from .conftest import REPO, absent, mlperf_path


@pytest.fixture(scope="module", autouse=True)
def qemu_present():
    try:
        qemu()
        arm_gcc()
    except Exception as e:   # noqa: BLE001 - the one-sentence TilewiseError
        absent(str(e))


@pytest.mark.parametrize("name", ["example", "ic_resnet8", "kws_dscnn", "ad_autoencoder"])
def test_bit_exact_under_qemu(name, tmp_path):
    """The pulp kernels' Arm path (tw_pulp_isa.h: smlad on sxtb16 halves) and the portable kernels
    for the rest, on the Cortex-M7: bit-exact with the golden model and the reference."""
    path = EXAMPLE_ONNX if name == "example" else mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("stm32h7"), "model")
    r = validate_model(path, ns, graph, 2, 0, tmp_path / "p", on="qemu").to_json()
    assert r["bit_exact"] and r["platform"] == "qemu" and r["inputs"] >= 2, r
    assert (r["dma_bytes_measured"], r["dma_transfers_measured"], r["dma_chunks_measured"]) == \
        (r["dma_bytes_predicted"], r["dma_transfers_predicted"], r["dma_chunks_predicted"])
    _holds_ram_prediction(r["ram"])


def _holds_ram_prediction(ram: dict) -> None:
    """RAM as the ELF and the run show it (validate/ram_elf.py) against analyze's prediction: the
    arenas and the I/O bytes exactly, the painted stack's high-water mark within 0.3-1x of the
    allowance, and the network's own statics (the HAL's counters) a few dozen bytes."""
    m, p = ram["measured"], ram["predicted"]
    for k in ("l1_arena_bytes", "l2_arena_bytes", "input_bytes", "output_bytes"):
        assert m[k] == p[k], (k, ram)
    # the allowance is one figure for every network (1,280 B); ad_autoencoder's widened dense
    # layers need 444-452 B of it (their general path apart, tw_pulp_linear.c)
    assert 0.3 * p["stack_bytes"] <= m["stack_bytes"] <= p["stack_bytes"], ram
    assert 0 < m["network_statics_bytes"] <= 128, ram
    assert m["total_bytes"] == sum(m[k] for k in m if k != "total_bytes"), ram


@pytest.mark.parametrize("name", ["example", "kws_dscnn"])
def test_instructions_counted_per_inference_and_layer(name, tmp_path):
    """--on count: the same firmware in the counting emulator is bit-exact too, and reports the
    executed instructions of an inference and of each layer (the layers' sum is the inference's
    but for network.c's few instructions between calls), within ±10% of the prediction."""
    path = EXAMPLE_ONNX if name == "example" else mlperf_path(name)
    graph = load_model(path)
    ns = schedule_network(lower(graph), get_target("stm32h7"), "model")
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="count").to_json()
    assert r["bit_exact"] and r["platform"] == "count", r
    total = r["measured_instructions"]
    per_layer = [l["measured_instructions"] for l in r["layers"]]
    assert total > 0 and all(n > 0 for n in per_layer) and len(per_layer) == len(ns.layers.layers)
    assert 0.99 * total <= sum(per_layer) <= total
    # the stm32h7 model (pulp kernels' model in instructions, bench/calibrate_m7.py) within ±10%
    assert abs(r["predicted_instructions"] / total - 1) <= 0.10, (r["predicted_instructions"], total)
    # the image's flash from its linker map (validate/code_size.py): code + constants + the
    # firmware around them is what the ELF loads into flash, but for alignment fill
    from elftools.elf.elffile import ELFFile

    code = r["code"]
    with open(tmp_path / "p" / "build_fw" / "network.elf", "rb") as f:
        loaded = sum(seg["p_filesz"] for seg in ELFFile(f).iter_segments()
                     if seg["p_type"] == "PT_LOAD" and seg["p_paddr"] < 0x20000000)
    parts = code["code_bytes"] + code["constants_bytes"] + code["firmware_bytes"]
    assert parts <= loaded <= parts + 256, (code, loaded)
    assert code["code_bytes"] > 10_000 and "Cortex-M7" in code["isa"]
    assert 0 <= code["constants_bytes"] - ns.flash_bytes <= 64, (code, ns.flash_bytes)
    # RAM: the counter serves the same semihosting, so the stack's high-water mark is read too
    _holds_ram_prediction(r["ram"])


def test_count_report_plots_measured_against_predicted_and_code_size(tmp_path):
    """validate --on count --report: the report's JSON holds every layer's measured and predicted
    instructions and the firmware's code size, its flash summary counts the code, and the HTML
    carries the measured-vs-predicted figure; analyze --code-size measures the same code."""
    rep = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(EXAMPLE_ONNX),
                           "--target", "stm32h7", "--on", "count", "--inputs", "1", "--report",
                           str(rep)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "flash:" in proc.stdout and "code" in proc.stdout
    data = json.loads((rep / "report.json").read_text())
    v = data["validation"]
    assert v["platform"] == "count" and len(v["layers"]) == len(data["layers"])
    assert all(lay["measured_instructions"] > 0 and lay["predicted_instructions"] > 0
               for lay in v["layers"])
    ms = data["totals"]["memory_summary"]
    assert ms["code_counted"] and ms["code_bytes"] == v["code"]["code_bytes"] > 0
    assert ms["flash_bytes"] == ms["flash_constants_in_place_bytes"] + ms["code_bytes"]
    html = (rep / "report.html").read_text()
    assert "Measured on count vs predicted instructions per layer" in html
    assert f"code {ms['code_bytes']:,} B" in (rep / "report.txt").read_text()
    an = subprocess.run([sys.executable, "-m", "tilewise.cli", "analyze", str(EXAMPLE_ONNX),
                         "--target", "stm32h7", "--code-size", "--json"],
                        capture_output=True, text=True, timeout=900)
    assert an.returncode == 0, an.stderr
    got = json.loads(an.stdout)["totals"]["memory_summary"]
    assert got["code_bytes"] == ms["code_bytes"] and got["flash_bytes"] == ms["flash_bytes"]
    refused = subprocess.run([sys.executable, "-m", "tilewise.cli", "analyze", str(EXAMPLE_ONNX),
                              "--target", "gap8", "--code-size"], capture_output=True, text=True)
    assert refused.returncode == 2 and "GAP SDK" in refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr


def _kernel_firmware(tmp_path, main: str, timeout: int = 600) -> str:
    """A Cortex-M7 firmware of the portable and pulp kernels (their Arm paths) with the test
    program tests/c/`main` (its generated headers in tmp_path), run under QEMU: its output."""
    from tilewise.targets.stm32h7 import FPU

    from . import tw_c_build as build

    gcc = arm_gcc()
    fw = FIRMWARE_C / "cortex_m"
    hal = build.C_ROOT / "tw_hal"
    srcs = [fw / "tw_fw.c", fw / "tw_board_stub.c", fw / "tw_fw_semihosting.c",
            hal / "tw_hal_cortex_m.c", build.TESTS_C / main,
            *build.kernel_sources(), *build.pulp_sources()]
    includes = [tmp_path, fw, hal, build.KERNELS, build.PULP]
    objects = []
    for src in srcs:
        obj = tmp_path / f"{src.parent.name}_{src.name}.o"
        # the Cortex-M tw_fw.h gives what the pulp-open cases use: TW_FW_L1 (the DTCM) and
        # tw_fw_cycles (the stub board's: 0, the cases' cycles print as 0)
        # hard-float, as stm32h7's firmware (its FPU: the onnx_fpu cases on the FPU)
        build.compile_object(cm_compile_args(gcc, includes, src, obj, FPU), src, obj)
        objects.append(obj)
    elf = tmp_path / "kernels.elf"
    ld = write_link_scripts(get_target("stm32h7"), tmp_path / "ld")
    subprocess.run(cm_link_args(gcc, ld, objects, elf, fpu=FPU), check=True)
    run = parse(run_firmware(elf, timeout=timeout))
    assert run.status == 0 and "TW_DONE" in run.text, run.text[-2000:]
    return run.text


def test_stm32h7_firmware_is_hard_float_and_bit_exact(tmp_path):
    """stm32h7's Cortex-M7 has an FPU (targets/stm32h7.py FPU = FPv5-D16): its firmware is built
    hard-float (readelf -A: float arguments in VFP registers), the start-up turns the FPU on, and
    the onnx-mode example — its conv / depthwise / dense layers requantized on the FPU where the
    cost model prices that below the integer form (onnx_fpu) — is bit-exact under QEMU and in the
    instruction counter."""
    from tilewise.targets.stm32h7 import FPU, KERNELS_CYCLES

    assert FPU == "fpv5-d16" and get_target("stm32h7").platform.make_data()["cm_arch"][-2:] == \
        ("-mfloat-abi=hard", "-mfpu=fpv5-d16")
    graph = load_model(EXAMPLE_ONNX)
    ns = schedule_network(lower(graph), get_target("stm32h7"), "model")
    for on in ("qemu", "count"):
        r = validate_model(EXAMPLE_ONNX, ns, graph, 2 if on == "qemu" else 1, 0, tmp_path / on,
                           on=on).to_json()
        assert r["bit_exact"] and r["platform"] == on, r
        elf = tmp_path / on / "build_fw" / "network.elf"
        attrs = subprocess.run(["arm-none-eabi-readelf", "-A", str(elf)], capture_output=True,
                               text=True, check=True).stdout
        assert "Tag_ABI_VFP_args: VFP registers" in attrs, attrs
        assert "Tag_FP_arch: FPv5/FP-D16 for ARMv8" in attrs, attrs
        network_c = "".join(f.read_text() for f in (tmp_path / on).rglob("*.c"))
        assert ("_onnx_fpu(" in network_c) == KERNELS_CYCLES.onnx_on_fpu
        assert "_conv2d_s8_onnx" in network_c


def test_every_pulp_kernel_bit_exact_on_cortex_m7(tmp_path):
    """The pulp kernels' Arm path kernel by kernel: tests/test_pulp_gvsoc.py's cases (every kernel
    kind and requant variant, border tiles, partial sums, the layer-sized ones) in a Cortex-M7
    firmware under QEMU, each output equal to the golden model's."""
    from .test_pulp_gvsoc import cases, cases_header

    cs = cases()
    (tmp_path / "cases.h").write_text(cases_header(cs))
    got = {}
    for line in _kernel_firmware(tmp_path, "pulp_gvsoc_main.c").splitlines():
        parts = line.split()
        if parts[:1] == ["TW_CASE"]:
            got[(cs[int(parts[1])].name, int(parts[2]))] = int(parts[3])
    assert set(got) == {(c.name, n) for c in cs for n in c.cores}
    bad = {k: v for k, v in got.items() if v}
    assert not bad, bad


def test_arm_scratch_formulas_are_the_kernels(tmp_path):
    """The stm32h7 bindings' scratch bytes (pulp.bindings(..., arm=True): im2col_bytes_arm,
    depthwise_bytes_arm) equal what the kernels built for the Cortex-M7 take
    (tw_pulp_conv2d_s8_scratch, tw_pulp_depthwise_s8_scratch), over the windows of the RISC-V
    formulas' test."""
    from tilewise.bindings import pulp

    from .codegen_cases import LayerSpec, layer_graph

    rows, want = [], []
    for fy, fx, sy, sx in ((3, 3, 1, 1), (5, 5, 2, 2), (7, 7, 3, 3), (3, 1, 1, 1), (1, 5, 1, 2),
                           (1, 1, 1, 1), (10, 4, 2, 1)):
        for c, oy, ox in ((3, 1, 1), (13, 7, 5), (64, 16, 16), (5, 2, 9)):
            spec = LayerSpec("conv", c=c, k=4, h=(oy - 1) * sy + fy, w=(ox - 1) * sx + fx, fy=fy,
                             fx=fx, sy=sy, sx=sx)
            n = layer_graph(spec, 0).layers[-1].nest
            rows.append(f"{{{n.IY}, {n.IX}, {oy}, {ox}, {fy}, {fx}, {sy}, {sx}, {c}}}")
            want.append((int(pulp.im2col_bytes_arm(n, 1, 4, c, oy, ox)),
                         int(pulp.depthwise_bytes_arm(n, 1, c, c, oy, ox))))
    (tmp_path / "windows.h").write_text(
        f"#define N_WINDOWS {len(rows)}\nstatic const int g_windows[N_WINDOWS][9] = {{\n    "
        + ",\n    ".join(rows) + "\n};\n")
    got = [tuple(int(v) for v in line.split()[1:]) for line in
           _kernel_firmware(tmp_path, "cm_scratch_main.c", 60).splitlines()
           if line.startswith("TW_SCRATCH")]
    assert got == want


def test_tiles_into_dtcm_with_constants_read_in_place(tmp_path):
    """The tiled variant of the part (tests/pulp_targets.py `tiled`: tiles copied into the DTCM):
    weights and per-channel constants are read where they are in flash (Memory.in_place: no
    copies, no L1 buffers for them), activations copied; bit-exact, copies as predicted."""
    from .pulp_targets import tiled

    path = mlperf_path("kws_dscnn")
    graph = load_model(path)
    ns = schedule_network(lower(graph), tiled("stm32h7"), "model")
    assert all(b.name not in ("w", "b") for s in ns.schedules for b in s.buffers)
    r = validate_model(path, ns, graph, 1, 0, tmp_path / "p", on="qemu").to_json()
    assert r["bit_exact"] and r["dma_bytes_measured"] == r["dma_bytes_predicted"] > 0, r
    text = (tmp_path / "p" / "layers" / "layer_00.c").read_text()
    assert "m.w = at_w(a, &t);" in text and "load_w" not in text


def test_fault_reports_and_exits_nonzero(tmp_path):
    """An undefined instruction: the fault handler prints TW_TRAP with the pc, QEMU exits 1."""
    gcc = arm_gcc()
    fw = FIRMWARE_C / "cortex_m"
    main = tmp_path / "udf.c"
    main.write_text('#include "tw_fw.h"\nint tw_fw_main(void)\n{\n    tw_fw_puts("before\\n");\n'
                    '    __asm__ volatile("udf #7");\n    return 0;\n}\n')
    objs = []
    for src in (fw / "tw_fw.c", fw / "tw_board_stub.c", fw / "tw_fw_semihosting.c", main):
        obj = tmp_path / f"{src.stem}.o"
        subprocess.run(cm_compile_args(gcc, [fw], src, obj), check=True)
        objs.append(obj)
    elf = tmp_path / "udf.elf"
    ld = write_link_scripts(get_target("stm32h7"), tmp_path / "ld")
    subprocess.run(cm_link_args(gcc, ld, objs, elf), check=True)
    run = parse(run_firmware(elf, timeout=60))
    assert run.status != 0 and "before" in run.text and "TW_TRAP hardfault pc " in run.text, run.text


def test_stm32h7_link_places_flash_dtcm_and_sram(tmp_path):
    """LINK=stm32h7: vectors and code in flash at 0x08000000, the L1 arena and the stack in DTCM
    at 0x20000000, the L2 arena in the AXI SRAM at 0x24000000, .bss in SRAM1-3 at 0x30000000."""
    graph = load_model(mlperf_path("ic_resnet8"))
    ns = schedule_network(lower(graph), get_target("stm32h7"), "model")
    p = generate(ns, tmp_path / "p")
    elf = build_firmware(p, make_inputs(ns.layers, 1), tmp_path / "b", link="stm32h7")
    out = subprocess.run(["arm-none-eabi-readelf", "-S", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    addr = {}
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 4 and parts[1] in (".vectors", ".text", ".bss", ".dtcm", ".stack",
                                           ".l2_arena"):
            addr[parts[1]] = int(parts[3], 16)
    assert addr[".vectors"] == 0x08000000 and 0x08000000 < addr[".text"] < 0x08200000, addr
    assert 0x20000000 <= addr[".dtcm"] < addr[".stack"] < 0x20020000, addr
    assert addr[".l2_arena"] == 0x24000000 and 0x30000000 <= addr[".bss"] < 0x30048000, addr
    size = {}
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] in (".dtcm", ".l2_arena", ".text"):
            size[parts[1]] = int(parts[5], 16)
    assert size[".dtcm"] >= ns.l1_bytes and size[".l2_arena"] >= ns.memory.peak, size


def test_qemu_needs_a_cortex_m_target():
    proc = subprocess.run([sys.executable, "-m", "tilewise.cli", "validate", str(EXAMPLE_ONNX),
                           "--target", "gap8", "--on", "qemu"], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--on qemu runs Cortex-M firmware; target gap8 has none" in proc.stderr
