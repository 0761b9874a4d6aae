"""Fit the integer exports' kernel coefficients (bindings/pulp/cost.py "Integer exports") on
GVSoC cycles and counted Cortex-M7 instructions of real integer_onnx layers.

The kernels: the 16x8 conv / depthwise / dense with a shift or div requantization (tw_s16.c,
tiled on the cluster), the add by two tables (tw_add_table_s8, tiled), the host core's tw_int.h
kernels (conv / depthwise / dense on 8/16/32-bit tensors, requant, add / sub / mul, matmul,
reduce, hardswish) and the slice's strided gather (a reshape is a view of its input in the memory
plan: no kernel). `python
bench/calibrate_int.py` runs a handful of ../shared/models/integer_onnx exports (NEMO, QuantLab,
Deeploy: every kernel above in at least one layer; DORY's golden folders or Deeploy's npz as the
input, bit-exact against them), one generated NEMO-style network (`s16_net`: the 16x8
depthwise and dense layers, which none of the exports has) and TFLite 16x8 models (`tflite16`:
MLPerf Tiny's float KWS and ResNet-8 quantized as `tilewise quantize --bits 16` writes them, on
seeded random calibration inputs — the same tw_s16.c kernels with TFLite's requantization, the
16-bit pooling and add) in three configurations:

- `gvsoc`: pulp-open (the target the gap8 / gap9 / pulp-open pulp model is fitted on: GVSoC
  models pulp-open's cluster) as partitioned — the 16x8 kernels and the table add tiled on the
  8-core cluster, the tw_int.h kernels on the host core ("cpu": cluster core 0 on L2);
- `gvsoc-cpu`: pulp-open with only its cpu module — the 16x8 kernels (not their tw_int.h twins
  of the same keys) and the table add run whole by one core on the L2 tensors
  (targets/pulp_open.py HOST);
- `count`: stm32h7 under the instruction counter (`validate --on count`).

Each layer of those kernels gives one row: its schedule, the measured cycles (or instructions)
of the layer and of its compute phases (tiled layers: every tile's kernel call, barrier to
barrier), and one column per coefficient — the kernel's predicted cycles with that coefficient 1
and the others 0, summed over the schedule's tiles (the coefficients enter linearly, as in
bench/calibrate_pulp.py); the column `rest` is what the model adds that this script does not fit
(the per-tile call, the untiled ops' per-call cost). The target of a tiled row is its measured
compute phases, of an untiled one its measured layer less the module's per-layer overhead
(a layer that overhead is most of — the Cortex-M7's small reshapes — is left out of the fit). Per
model — the cluster's (tiled rows of `gvsoc`), the host core's (untiled rows of `gvsoc` and
`gvsoc-cpu`), the Cortex-M7's (`count`) — a non-negative least-squares fit (scipy.optimize.nnls)
of its coefficients, each row weighted by 1/measured, pulled gently towards PRIORS (what the C's
loops cost, counted by hand) so that a coefficient the rows cannot tell apart stays sensible.

Prints per configuration and kernel (the host core's transposes too, fitted on the Cortex-M7
only) the measured and predicted cycles and their ratio — by the model in the tree when the rows
were measured (`then`), by the model in the tree now and by the fit — and writes
bench/calibration_int.json (the rows, the fitted coefficients, the per-kernel table, and per
configuration the TFLite 16x8 networks' measured layers summed: `tflite16_networks`), which
tests/test_cost_model_int.py and tests/test_cost_model_s16.py hold the model in the tree against.
The TFLite 16x8 rows' `then` is the model at 2da4f06, which priced those layers as the SIMD int8
kernels (issue 25 item 4; the rows were measured with the new structure's provisional
coefficients, whose schedules they keep). Rerun after changing the
kernels or the model: the schedules are the model's own, so a refit changes them a little.

Usage: .venv/bin/python bench/calibrate_int.py [--configs gvsoc,gvsoc-cpu,count] [--reuse]
       [--networks A,B] (only these networks measured, their rows replaced in --data)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import calibrate_pulp as cp  # noqa: E402
from tilewise.bindings.base import specialized  # noqa: E402
from tilewise.bindings.pulp.cost import INTEGER_EXPORTS, PulpKernels  # noqa: E402
from tilewise.ir.layer import LoopNest  # noqa: E402
from tilewise.schedule.cost import Evaluator, untiled_schedule  # noqa: E402
from tilewise.schedule.placement import place  # noqa: E402
from tilewise.targets.base import Target  # noqa: E402
from tilewise.targets.pulp_open import HOST  # noqa: E402
from tilewise.targets.registry import get_target  # noqa: E402
from tilewise.targets.stm32h7 import KERNELS_INSTRUCTIONS as M7  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "calibration_int.json"

#: the exports measured (paths under integer_onnx/) and what each brings
EXPORTS = (
    "nemo/dronet_complete",            # 16x8 conv (shift), table add, int add, int dense
    "nemo/dronet_no_pooling",          # 16x8 conv, int conv x32, requant, int add / mul
    "nemo/Residual_connection_test_2",  # 16x8 conv, int add
    "nemo/TCN_T",                      # table add, int add / mul, requant, reshape, transpose
    "quantlab_dory/Dronet",            # table add (QuantLab's DORY adder)
    "deeploy/kernels/Add/Regular_RQ",  # table add, reshape
    "deeploy/kernels/Add/Large",       # int add x8 -> 16
    "deeploy/kernels/Sub",             # int sub
    "deeploy/kernels/MatMul/Regular_RQ",  # matmul, requant x32 -> 8
    "deeploy/kernels/MatMul/Batch",    # matmul, reshape
    "deeploy/kernels/GEMM/Regular_RQPerRow",  # int dense, int add / mul x32, requant
    "deeploy/kernels/Hardswish/Regular_RQ",   # hardswish, requant
    "deeploy/kernels/ReduceSum",       # reduce
    "deeploy/kernels/ReduceMean",      # reduce (mean)
    "deeploy/kernels/Conv/DW_2D",      # int depthwise
    "deeploy/kernels/Conv/Regular_2D",  # int conv
    "deeploy/kernels/Conv/Regular_1D",  # int conv, reshape of int32
    "deeploy/kernels/Slice",           # slice
    "nemo/SmartAgri-net",              # 8-bit conv / dense in div mode (the portable kernels)
    "nemo/eegnetDW_1d_8b_1xW",         # 8-bit 1-D conv / dense in div mode
)
#: the generated network (s16_net): 16x8 depthwise (shift) and dense (div: the one division the
#: data holds, the frontend giving the exports' NEMO divisions an exact shift form)
SYNTHETIC = "s16_net"
#: TFLite 16x8 models (int16 activations, int8 weights) of MLPerf Tiny's float models
#: (../shared/models/mlperf_tiny_float): "tflite16/<name>", made by `tflite16`
TFLITE16 = ("tflite16/kws_dscnn", "tflite16/ic_resnet8")
#: configuration -> (target, platform, cpu only, networks)
CONFIGS = {
    "gvsoc": ("pulp-open", "gvsoc", False, (*EXPORTS, SYNTHETIC, *TFLITE16)),
    "gvsoc-cpu": ("pulp-open", "gvsoc", True, ("nemo/Residual_connection_test_2",
                                              "deeploy/kernels/Add/Regular_RQ", SYNTHETIC,
                                              "tflite16/kws_dscnn")),
    "count": ("stm32h7", "count", False, (*EXPORTS, SYNTHETIC, *TFLITE16)),
}

#: the coefficients fitted here (bindings/pulp/cost.py PulpKernels), per model: the integer
#: exports' (INTEGER_EXPORTS), and on the Cortex-M7 the host core's transpose per element and per
#: row (tw_transpose, which the slice runs too), there assumed the untiled ops' per element until
#: counted here
S16 = ("s16_mac", "s16_tap", "s16_dw_tap", "s16_out", "s16_rq_tflite", "s16_rq_real", "s16_pool_tap",
       "s16_pool_out", "s16_add_elem")
S8 = ("s8_mac",)
TADD = ("tadd_elem", "tadd_entry")
INT = ("int_mac", "int_mac64", "int_tap", "int_out", "int_rq_elem", "int_add_elem", "int_bin_elem",
       "int_hsw_elem", "int_mm_mac", "int_mm_out", "int_red_in", "int_red_out")
COEFS = (*INTEGER_EXPORTS, "transpose_elem", "transpose_row")
assert set(INTEGER_EXPORTS) == {*S16, *S8, "div64", *TADD, *INT}
#: what the C's loops say each costs (cycles on RI5CY, 1 per instruction, loads 2, 64-bit
#: multiplies and shifts a few instructions on rv32, tw_div64_clamp's comparisons and division)
PRIORS = {"s16_mac": 5.0, "s8_mac": 4.0, "s16_tap": 20.0, "s16_dw_tap": 25.0, "s16_out": 40.0, "div64": 150.0,
          "s16_rq_tflite": 30.0, "s16_rq_real": 300.0, "s16_pool_tap": 8.0, "s16_pool_out": 40.0,
          "s16_add_elem": 60.0,
          "tadd_elem": 12.0, "tadd_entry": 4.0, "int_mac": 15.0, "int_mac64": 25.0, "int_tap": 30.0,
          "int_out": 60.0, "int_rq_elem": 60.0, "int_add_elem": 40.0, "int_bin_elem": 50.0,
          "int_hsw_elem": 60.0, "int_mm_mac": 30.0, "int_mm_out": 30.0, "int_red_in": 20.0,
          "int_red_out": 60.0, "transpose_elem": 20.0,
          "transpose_row": 20.0}
PRIOR_WEIGHT = 0.05
#: the models fitted: name -> (configs and modules whose rows it fits, tiled rows?, coefficients)
MODELS = {
    "cluster": ((("gvsoc", "cluster"),), True, (*S16, *S8, "div64", *TADD)),
    "host": ((("gvsoc", "cpu"), ("gvsoc", "cluster"), ("gvsoc-cpu", "cpu")), False,
             (*S16, *TADD, *INT)),
    "m7": ((("count", "cpu"),), False, COEFS),
}

#: the models in the tree whose coefficients the fits replace
TREE = {"cluster": PulpKernels(), "host": HOST, "m7": M7}

#: binding name prefix -> the kernel it runs (the table's rows)
KERNELS = (("conv2d_s16_int", "16x8 conv"), ("depthwise_s16_int", "16x8 depthwise"),
           ("fully_connected_s16_int", "16x8 dense"), ("add_table_s8", "table add"),
           ("conv2d_int_", "int conv"), ("depthwise_int_", "int depthwise"),
           ("fully_connected_int_", "int dense"), ("requant_x", "int requant"),
           ("add_int_", "int add/sub"), ("sub_int_", "int add/sub"), ("mul_int_", "int mul"),
           ("matmul_x", "int matmul"), ("reduce_x", "int reduce"), ("hardswish_x", "int hardswish"),
           ("slice_s", "slice"), ("transpose", "transpose"),
           ("conv2d_s8_div", "8-bit div conv"), ("fully_connected_s8_div", "8-bit div dense"),
           ("depthwise_s8_div", "8-bit div depthwise"),
           # TFLite's 16x8 layers (after the integer exports' *_s16_int: the first prefix wins)
           ("conv2d_s16", "16x8 conv tflite"), ("depthwise_s16", "16x8 depthwise tflite"),
           ("fully_connected_s16", "16x8 dense tflite"), ("avg_pool_s16", "16-bit pool"),
           ("max_pool_s16", "16-bit pool"), ("add_s16", "16x8 add/sub"),
           ("sub_s16", "16x8 add/sub"),
           # Deeploy's iSoftmax / iRMSNorm / iLayerNorm / iGELU / ITAMax: priced by assumed coefficients
           # (cost.py ASSUMED_INT)
           ("int_softmax_x", "int softmax"), ("rms_norm_x", "int rms_norm"),
           ("layer_norm_x", "int layer_norm"), ("int_gelu_x", "int gelu"), ("ita_max_x", "int ita_max"))
#: the kernels no calibration measures yet (their coefficients are cost.py's ASSUMED_INT)
ASSUMED_KERNELS = ("int softmax", "int rms_norm", "int layer_norm", "int gelu", "int ita_max")
#: the kernels of TFLite's 16x8 models (tests/test_cost_model_s16.py holds them layer by layer)
TFLITE16_KERNELS = ("16x8 conv tflite", "16x8 depthwise tflite", "16x8 dense tflite",
                    "16-bit pool", "16x8 add/sub")


def kernel_of(binding_name: str) -> str | None:
    """The kernel of the table a binding runs, or None (not one of the integer exports'; the
    cluster's row kernels and transpose through L1 are bench/calibrate_rows.py's)."""
    if "_rows_" in binding_name or binding_name.startswith("transpose_l1"):
        return None
    return next((k for prefix, k in KERNELS if binding_name.startswith(prefix)), None)


def s16_net(path: Path) -> Path:
    """A NEMO-style network whose unclipped residual sums (int16) feed a 3x3 depthwise conv
    (shift requantization) and a dense layer (div requantization): the 16x8 depthwise and dense
    kernels, which no export in integer_onnx has."""
    from tests.nemo_models import NemoNet

    net = NemoNet("s16_dw_fc", (1, 16, 16, 16), 11)
    rng = net.rng

    def chain(y):   # NEMO's requantization of 16 channels onto uint8
        return net.cast_requant(y, rng.integers(1, 6, (1, 16, 1, 1)),
                                rng.integers(-3000, 3000, (1, 16, 1, 1)), int(2 ** 21 * 0.002) | 1,
                                2 ** 21, 0, 255)

    def unclipped_sum(a, b):
        s = net.node("Add", [net.node("Mul", [a, net.const("s", np.float32(2))]), b])
        return net.node("Floor", [net.node("Div", [s, net.const("d", np.float32(2))])])

    a = chain(net.conv("x", 16, 16, 3, pads=1, wmax=12))
    s = unclipped_sum(a, "x")
    w = net.const("wdw", rng.integers(-20, 21, (16, 1, 3, 3)))
    d = net.node("Conv", [s, w, net.const("bdw", rng.integers(-300, 300, 16))], kernel_shape=[3, 3],
                 pads=[1] * 4, strides=[1, 1], group=16)
    d = chain(d)
    y = net.gemm(net.flatten(unclipped_sum(d, a)), 16 * 16 * 16, 32, wmax=20)
    y = net.cast_requant(y, rng.integers(1, 4, (32,)), rng.integers(-900, 900, (32,)),
                         int(2 ** 21 * 0.0005) | 1, 2 ** 21 - 1, -128, 127)
    return net.save(path, y)


def tflite16(name: str, path: Path) -> Path:
    """MLPerf Tiny's float model `name` quantized as `tilewise quantize --bits 16` writes it
    (minmax on 16 seeded random inputs: the kernels' cost does not depend on the scales)."""
    from tests.conftest import models_dir
    from tilewise.quantize.pipeline import calibration_inputs, load_float_onnx, quantize_model
    from tilewise.quantize.tflite_out import write_tflite

    src = models_dir() / "mlperf_tiny_float" / f"{name}_float.tflite"
    model = load_float_onnx(src)
    shape = {"kws_dscnn": (49, 10, 1), "ic_resnet8": (32, 32, 3)}[name]
    rng = np.random.default_rng(1601)
    raw = (rng.standard_normal((16, *shape)) * 20.0 if name == "kws_dscnn"
           else rng.uniform(0.0, 255.0, (16, *shape))).astype(np.float32)
    res = quantize_model(model, calibration_inputs(model, raw, "calib", nhwc=True), "minmax", bits=16)
    path.write_bytes(write_tflite(model, res.plan, res.qparams, 16).data)
    return path


def config_target(config: str) -> Target:
    """The configuration's target: cpu only, the 16x8 kernels there without their tw_int.h twins
    of the same keys (which the partition may prefer: this configuration measures the 16x8
    kernels from L2)."""
    name, _, cpu_only, _ = CONFIGS[config]
    t = get_target(name)
    if t.instruction_model is not None:     # counted: the target's model in instructions
        t = t.instruction_model(t)
    if not cpu_only:
        return t
    cpu = t.module("cpu")
    s16 = {b.key for b in cpu.bindings if getattr(b.cost, "scalar", "") == "s16"}
    keep = tuple(b for b in cpu.bindings if not (getattr(b.cost, "int_ops", False) and b.key in s16))
    return replace(t, modules=(replace(cpu, bindings=keep),))


def _export(net: str) -> tuple[Path, dict]:
    """The export's model file and its golden data as validate takes them."""
    from tests.conftest import models_dir

    d = models_dir() / "integer_onnx" / net
    (model,) = sorted(d.glob("*.onnx"))
    if (d / "input.txt").exists():
        return model, dict(golden=d)
    return model, dict(data=d / "inputs.npz", expected=d / "outputs.npz")


def run(net: str, config: str, work: Path):
    """(lowered graph, network schedule, validate report as JSON) of one network on GVSoC or the
    counter, bit-exact."""
    from tilewise.frontend import load_model
    from tilewise.passes import lower
    from tilewise.pipeline import schedule_network
    from tilewise.validate.check import validate_model
    from tilewise.validate.own_data import validate_data_path
    from tilewise.validate.own_inputs import read_user_data

    target, on = config_target(config), CONFIGS[config][1]
    if net == SYNTHETIC or net in TFLITE16:
        path = (s16_net(work / f"{SYNTHETIC}.onnx") if net == SYNTHETIC
                else tflite16(net.split("/", 1)[1], work / "model16x8.tflite"))
        graph = load_model(path)
        lg = lower(graph)
        ns = schedule_network(lg, target, "model")
        r = validate_model(path, ns, graph, 1, 0, work / "p", on=on).to_json()
    else:
        model, kw = _export(net)
        lg = read_user_data(model, kw.get("data"), expected=kw.get("expected"),
                            golden=kw.get("golden")).lg
        ns = schedule_network(lg, target, "model")
        r = validate_data_path(model, target, on=on, out_dir=work / "p", **kw).to_json()
    if not r["bit_exact"]:
        raise RuntimeError(f"{net} ({config}): not bit-exact: {r['mismatches'][:2]}")
    for i, lc in enumerate(r["layers"]):   # validate scheduled the same network the same way
        assert abs(lc["predicted_cycles"] - ns.layer_cycles(i)) <= 1e-6 * ns.layer_cycles(i) + 1e-6
    return lg, ns, r


def collect(configs: tuple[str, ...], only: tuple[str, ...] = ()) -> list[dict]:
    """The rows of every network of each configuration (of `only`'s, when given)."""
    rows = []
    for config in configs:
        for net in CONFIGS[config][3]:
            if only and net not in only:
                continue
            with tempfile.TemporaryDirectory(prefix="tw_calib_int_") as tmp:
                lg, ns, r = run(net, config, Path(tmp))
            unit = "measured_instructions" if CONFIGS[config][1] == "count" else "measured_cycles"
            for i, lc in enumerate(r["layers"]):
                p, s = ns.placement(i), ns.schedules[i]
                kernel = kernel_of(p.binding.name)
                if kernel is None:
                    continue
                rows.append({"config": config, "network": net, "index": i, "layer": lc["name"],
                             "kernel": kernel, "module": p.module.name, "binding": p.binding.label,
                             "untiled": s.untiled, "nest": asdict(s.nest),
                             "tile": {t.dim: t.tile for t in s.tiles}, "order": list(s.loop_order),
                             "buffering": s.buffering, "measured_layer": lc[unit],
                             "measured_compute": lc.get("measured_compute_cycles") or None,
                             "predicted_layer_then": ns.layer_cycles(i),
                             "predicted_compute_then": s.compute_cycles})
            print(f"{config:9s} {net:38s} {r.get(unit, 0):>14,} "
                  f"{'instructions' if unit.endswith('instructions') else 'cycles'}", flush=True)
    return rows


def kernel_sources() -> str:
    """A digest of the portable kernels' C (bindings/portable/c) the rows were measured with."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((REPO / "tilewise" / "bindings" / "portable" / "c").glob("*.[ch]")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


# --- the model's predictions of a stored row -----------------------------------------------------

def placement_of(row: dict, target: Target):
    """The row's placement on `target` (its module and binding by label, the static rules)."""
    module = target.module(row["module"])
    binding = next(b for b in module.bindings if b.label == row["binding"])
    return place(target, module, binding)


def schedule_of(row: dict, target: Target, placement=None):
    """The row's layer schedule rebuilt on `target` (the stored tiles, order and buffering)."""
    p = placement or placement_of(row, target)
    nest = LoopNest(**{**row["nest"], "pads": tuple(row["nest"]["pads"])})
    if row["untiled"]:
        return untiled_schedule(nest, target, p)
    return Evaluator(nest, target, p).build(row["tile"], tuple(row["order"]), row["buffering"])


def predicted(row: dict, target: Target) -> float:
    """What the model in the tree predicts for the row's measured quantity: the compute phases
    of a tiled layer, the whole layer of an untiled one."""
    s = schedule_of(row, target)
    return s.compute_cycles if not row["untiled"] else s.cycles


def measured(row: dict) -> float:
    return row["measured_layer"] if row["untiled"] else row["measured_compute"]


def _kernel_cycles(cost, row: dict, target: Target) -> float:
    """Σ over the row's tiles of the kernel cycles `cost` gives (untiled: the whole layer)."""
    p = placement_of(row, target)
    s = schedule_of(row, target, p)
    terms = cost.terms(s.nest, p.module.cores)
    return cp.whole(terms, s) if row["untiled"] else cp.tiles_sum(terms, s)


def _binding_cost(model, binding):
    """`model` specialised as the binding's own cost is (int_ops.py's copy, for_key)."""
    if getattr(binding.cost, "int_ops", False):
        model = model.for_int_ops()
    return specialized(model, binding.key)


def add_columns(rows: list[dict]) -> None:
    """Each row's columns: per coefficient of COEFS the kernel cycles with it 1 and the others 0,
    and `rest` (all of COEFS 0), in the structure of the row's module's model."""
    for r in rows:
        target = config_target(r["config"])
        binding = placement_of(r, target).binding
        base = binding.cost
        zero = replace(base, **dict.fromkeys(COEFS, 0.0))
        rest = _kernel_cycles(_binding_cost(zero, binding), r, target)
        r["columns"] = {c: _kernel_cycles(_binding_cost(replace(zero, **{c: 1.0}), binding), r, target)
                        - rest for c in COEFS}
        r["columns"]["rest"] = rest
        r["overhead"] = 0.0 if not r["untiled"] else target.module(r["module"]).layer_overhead_cycles


def fit(rows: list[dict], names: tuple[str, ...], fixed: dict[str, float]) -> dict[str, float]:
    """Non-negative least squares of the rows' measured kernel cycles on the columns of `names`
    (the other coefficients at `fixed`), relative errors, with the PRIORS as weak extra rows."""
    from scipy.optimize import nnls

    # a layer most of whose cycles are the module's per-layer overhead (the Cortex-M7's 523
    # instructions of a tiled layer's set-up, which a whole-function layer such as a reshape of a
    # few hundred bytes does not run) tells nothing about its kernel
    rows = [r for r in rows if measured(r) - r["overhead"] >= 0.5 * measured(r)]
    names = tuple(c for c in names if any(r["columns"][c] for r in rows))
    A, y = [], []
    for r in rows:
        m = measured(r) - r["overhead"]
        known = r["columns"]["rest"] + sum(v * r["columns"][c] for c, v in fixed.items())
        A.append([r["columns"][c] / measured(r) for c in names])
        y.append((m - known) / measured(r))
    prior = np.array([PRIORS[c] for c in names])
    A = np.vstack([np.array(A), PRIOR_WEIGHT * np.diag(1.0 / prior)])
    x, _ = nnls(A, np.concatenate([np.array(y), PRIOR_WEIGHT * np.ones(len(names))]))
    return {c: round(float(v), 3) for c, v in zip(names, x)}


def fitted_prediction(r: dict, coefs: dict[str, float]) -> float:
    return r["overhead"] + r["columns"]["rest"] + sum(v * r["columns"][c] for c, v in coefs.items())


def table(rows: list[dict], coefs: dict[str, dict[str, float]] | None = None,
          by: Callable[[dict], str | None] = lambda r: f"{r['config']} {r['module']} {r['kernel']}"
          ) -> dict:
    """Per configuration and kernel (or per key `by` gives a row, None: left out): Σ measured,
    Σ predicted by the model when measured (`then`), by the model in the tree (`now`) and by the
    fit, and the ratios predicted / measured."""
    out: dict = {}
    for r in rows:
        key = by(r)
        if key is None:
            continue
        e = out.setdefault(key, {"layers": 0, "measured": 0.0, "then": 0.0, "now": 0.0,
                                 "fitted": 0.0})
        then = r["predicted_layer_then"] if r["untiled"] else r["predicted_compute_then"]
        e["layers"] += 1
        e["measured"] += measured(r)
        e["then"] += then
        e["now"] += predicted(r, config_target(r["config"]))
        if coefs is not None:
            e["fitted"] += fitted_prediction(r, coefs[_model_of(r)])
    for e in out.values():
        for k in ("then", "now", "fitted"):
            e[f"{k}_ratio"] = round(e[k] / e["measured"], 3) if e["measured"] else None
    return dict(sorted(out.items()))


def _tflite16_network(r: dict) -> str | None:
    """The key of the TFLite 16x8 networks' table: configuration and network (every measured
    layer of the network: all but the softmax)."""
    return f"{r['config']} {r['network']}" if r["network"] in TFLITE16 else None


def _model_of(r: dict) -> str:
    return next(name for name, (sel, tiled, _) in MODELS.items()
                if (r["config"], r["module"]) in sel and tiled == (not r["untiled"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--data", type=Path, default=OUT)
    ap.add_argument("--networks", default="", help="only these networks (comma-separated)")
    ap.add_argument("--reuse", action="store_true", help="refit the rows already in --data")
    a = ap.parse_args(argv)
    only = tuple(filter(None, a.networks.split(",")))
    configs = tuple(a.configs.split(","))
    rows = (json.loads(a.data.read_text())["rows"] if a.reuse else collect(configs, only))
    if only and not a.reuse and a.data.exists():   # re-measured networks replace their rows
        old = json.loads(a.data.read_text())["rows"]
        rows = [r for r in old if not (r["network"] in only and r["config"] in configs)] + rows
    sources = (json.loads(a.data.read_text())["kernel_sources"] if a.reuse else kernel_sources())
    if not a.reuse:   # the measurements first: a failing fit keeps them (--reuse)
        a.data.write_text(json.dumps({"kernel_sources": sources, "rows": rows}, indent=1) + "\n")
    add_columns(rows)
    coefs: dict[str, dict[str, float]] = {}
    for name, (sel, tiled, names) in MODELS.items():
        mine = [r for r in rows if _model_of(r) == name]
        # the coefficients a model does not fit, or no row of it exercises, keep the tree's
        # values; the host core's division is the cluster's (arithmetic, not loads)
        tree = {c: float(getattr(TREE[name], c)) for c in COEFS}
        fixed = {c: v for c, v in tree.items() if c not in names}
        if name == "host" and "div64" in coefs.get("cluster", {}):
            fixed["div64"] = coefs["cluster"]["div64"]
        coefs[name] = {**tree, **fixed, **fit(mine, names, fixed)} if mine else {}
    err = table(rows, coefs)
    for name, c in coefs.items():
        print(f"\n{name}: " + ", ".join(f"{k} {v:g}" for k, v in c.items()))
    print(f"\n{'config module kernel':40s} {'layers':>6s} {'measured':>14s} {'then':>7s} "
          f"{'now':>7s} {'fitted':>7s}   (predicted / measured)")
    nets = table(rows, coefs, _tflite16_network)
    for k, e in [*err.items(), ("", None), *nets.items()]:
        if e is None:
            print(f"\n{'config network (TFLite 16x8)':40s}")
            continue
        print(f"{k:40s} {e['layers']:6d} {e['measured']:14,.0f} {e['then_ratio']:7.3f} "
              f"{e['now_ratio']:7.3f} {e['fitted_ratio']:7.3f}")
    a.data.write_text(json.dumps({"kernel_sources": sources, "coefficients": coefs, "kernels": err,
                                  "tflite16_networks": nets, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
