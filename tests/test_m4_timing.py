"""The Cortex-M4 cycle estimate (platforms/m4_timing.py, priced by platforms/mca_timing.py) and the
stm32l4r5 cost model fitted on it (targets/stm32l4r5.py KERNELS_CYCLES).

- The estimator against its validation set (Thumb-2 sequences whose Cortex-M4 cycles follow from
  the Arm Cortex-M4 TRM's timing) within the error its docstring states, and the set
  discriminates: llvm-mca's Cortex-M4 model without the TRM's corrections misses it.
- analyze on stm32l4r5 prints "cycles (Cortex-M4 model, estimated)" and the ms at 120 MHz, never
  an instruction count as cycles.
- `validate --on count` on kws_dscnn (conv 10x4, depthwise, 1x1, pool, dense; ~10 s): the cost
  model's cycles against the estimate per layer kind (BAND_CYCLES) and per inference
  (BAND_NETWORK), the report labelling the estimate as the Cortex-M4 model's. The bands hold the
  fit of bench/calibrate_m7.py --target stm32l4r5 (bench/calibration_m4_cycles.json).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tilewise.errors import TilewiseError
from tilewise.passes import lower
from tilewise.pipeline import Options, load, schedule_network
from tilewise.platforms import m4_timing as m4
from tilewise.platforms import mca_timing as mca
from tilewise.platforms.mca_timing import CoreTiming
from tilewise.targets import stm32l4r5
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs, validate_network

from .conftest import absent, mlperf_path

#: |estimated / predicted - 1| per layer kind summed over the model's layers (stm32h7's bands,
#: tests/test_m7_cost_model.py; kws's conv 10x4 is at 0.89, 1x1 at 0.97, depthwise at 0.96)
BAND_CYCLES = {"conv 10x4": 0.15, "conv 1x1": 0.10, "dwconv": 0.10, "fc": 0.15, "pool": 0.15}
#: per inference
BAND_NETWORK = 0.08


@pytest.fixture(scope="module")
def mca_present():
    try:
        mca.llvm_mca()
    except TilewiseError as e:
        absent(str(e))


def test_micro_benchmarks_within_stated_error(mca_present):
    """Each TRM-timed sequence within the worst error the docstring states, the set's mean within
    the stated mean; llvm-mca's Cortex-M4 model alone (no TRM corrections, no taken-branch
    refill) is off by more than 10% on at least five of them, so the test can fail."""
    errors = mca.validation_errors(m4.TIMING, m4.MICRO_BENCHMARKS)
    for b, e in zip(m4.MICRO_BENCHMARKS, errors):
        assert abs(e) <= m4.VALIDATION_ERROR["worst"] + 1e-9, (b.name, e)
    assert sum(map(abs, errors)) / len(errors) <= m4.VALIDATION_ERROR["mean"] + 1e-9, errors
    bare = CoreTiming(cpu="cortex-m4", label="Cortex-M4", model="", clock_mhz=120.0)
    raw = mca.validation_errors(bare, m4.MICRO_BENCHMARKS)
    assert sum(abs(e) > 0.10 for e in raw) >= 5, raw


def test_trm_corrections_per_instruction_class():
    """The TRM's rules as extra cycles over llvm-mca: a load run charged once, an address
    written by the previous ALU instruction, LDM / POP of N registers, LDRD, SMULL."""
    x = m4.extra_cycles
    assert x(["ldr r0, [r1]", "ldr r2, [r1, #4]", "add r3, r3, r0"]) == 1      # run of 2: +1
    assert x(["ldr r0, [r1]", "add r3, r3, r0"]) == 0          # llvm-mca stalls the consumer
    assert x(["add r1, r1, #4", "ldr r0, [r1]", "add r3, r3, r0"]) == 1        # address dependency
    assert x(["ldm r4, {r0, r1, r2, r3}"]) == 4 and x(["pop {r4, r5, pc}"]) == 2
    assert x(["ldrd r0, r1, [r2]", "nop"]) == 2 and x(["smull r0, r1, r2, r3"]) == -1


def test_stm32l4r5s_instruction_variant_prices_instructions():
    """The instruction re-pricing's target (validate/instructions.py): instructions, no model of
    its own (the labelled cycles: test_m7_cost_model's analyze test, both cores)."""
    it = stm32l4r5.instructions(get_target("stm32l4r5"))
    assert it.cycles_unit.startswith("instructions") and it.instruction_model is None


def test_cycle_model_per_layer_kind_against_the_estimate(mca_present):
    """kws_dscnn counted on unicorn's Cortex-M4: bit-exact, the estimate labelled the Cortex-M4
    model's and above the instruction count (single issue), the cost model's cycles within the
    bands of it per layer kind and per inference."""
    path = mlperf_path("kws_dscnn")
    lg = lower(load(path, Options()))
    ns = schedule_network(lg, get_target("stm32l4r5"))
    with tempfile.TemporaryDirectory(prefix="tw_m4_cost_") as tmp:
        report, _ = validate_network(ns, Path(tmp) / "p", make_inputs(lg, 1, 0)[:1], on="count")
    r = report.to_json()
    assert r["bit_exact"], r["mismatches"][:2]
    assert r["estimated_cycles_model"].startswith("estimated, Cortex-M4 model"), r
    assert r["estimated_cycles"] > r["measured_instructions"], r
    assert abs(r["estimated_cycles"] / r["predicted_cycles"] - 1) <= BAND_NETWORK, r
    acc: dict[str, list[float]] = {}
    for layer, lc in zip(ns.layers.layers, r["layers"]):
        n = layer.nest
        kind = n.kind + (f" {n.FY}x{n.FX}" if n.kind == "conv" else "")
        a = acc.setdefault(kind, [0.0, 0.0])
        a[0] += lc["estimated_cycles"]
        a[1] += lc["predicted_cycles"]
    assert set(BAND_CYCLES) <= set(acc), acc
    for kind, band in BAND_CYCLES.items():
        est, pred = acc[kind]
        assert abs(est / pred - 1) <= band, (kind, est, pred)
