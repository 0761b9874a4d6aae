"""`tilewise generate`: the project's files, that each layer's C shows and follows its schedule,
the constants' tile-major layout, L3 weight streaming, untiled layers, the PULP variant compiled
against the PMSIS stub, the Makefile, and one-sentence errors for what generate cannot do."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from tilewise.bindings.portable.constants import layer_constants
from tilewise.cli import main as cli_main
from tilewise.codegen import generate, load_project
from tilewise.errors import TilewiseError
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.schedule.space import fetch_count, operands
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs, validate_network
from tilewise.validate.build import compile_pulp

from .codegen_cases import LayerSpec, c_cache, layer_graph  # noqa: F401 (fixture)
from .conftest import REPO, mlperf_path

PMSIS_STUB = REPO / "tests" / "pmsis_stub"


def example_ns(target: str = "gap8", **kw):
    return schedule_network(lower(load_model(EXAMPLE_ONNX)), get_target(target, **kw), "model")


@pytest.fixture(scope="module")
def resnet16():
    """ic_resnet8 on gap8 at 16 kB of L1: multi-tile convs, C-tiled convs with partial sums."""
    return schedule_network(lower(load_model(mlperf_path("ic_resnet8"))), get_target("gap8", l1_kb=16), "model")


def test_project_files_and_makefile_build(tmp_path):
    ns = example_ns(l1_kb=8)
    p = generate(ns, tmp_path / "proj")
    files = {f.relative_to(p.path).as_posix() for f in p.path.rglob("*") if f.is_file()}
    for f in ("network.h", "network.c", "weights.h", "weights.c", "main_host.c", "Makefile",
              "README.md", "tilewise.json", "layers/layers.h", "tw_hal/tw_hal.h",
              "tw_hal/tw_hal_host.c", "tw_hal/tw_hal_pulp.c", "tw_runtime/tw_tile.c",
              "tw_kernels/tw_conv.c", "tw_kernels/tw_kernels.h"):
        assert f in files, f
    assert {f for f in files if f.startswith("layers/layer_")} == {f"layers/layer_{i:02d}.c" for i in range(8)}
    net = (p.path / "network.c").read_text()
    assert "malloc" not in net and all("malloc" not in (p.path / f).read_text()
                                       for f in files if f.startswith("layers/"))
    # the layers run in order, at the memory plan's offsets
    calls = re.findall(r"tw_layer_(\d\d)\(&a\)", net)
    assert calls == [f"{i:02d}" for i in range(8)]
    base = p.manifest["l2_arena_base"]
    for layer in ns.layers.layers:
        assert f"a.y = L2 + {ns.memory.activation_offset(layer.output) - base};" in net
    # the weights resident in L2 are the const image, kept apart from the arena by the plan
    m = p.manifest
    assert m["l2_arena_holes"] == 0 and m["l2_arena_bytes"] + m["l2_image_bytes"] == m["l2_peak_bytes"]
    # the Makefile's host build is -Wall -Wextra -Werror clean and runs
    proc = subprocess.run(["make", "-s", "-C", str(p.path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "-Werror" in (p.path / "Makefile").read_text()
    lg = ns.layers
    xs = make_inputs(lg, 1)
    (p.path / "input.bin").write_bytes(b"".join(x.tobytes() for x in xs))
    run = subprocess.run(["make", "-s", "-C", str(p.path), "run"], capture_output=True, text=True)
    assert run.returncode == 0 and "TW_STATS" in run.stdout, run.stderr
    from tilewise.validate import golden_outputs
    got = np.fromfile(p.path / "output.bin", dtype=np.int8).reshape(len(xs), -1)
    for g, w in zip(got, golden_outputs(lg, xs)):
        assert np.array_equal(g, w.reshape(-1))


def _active_loops(s) -> list[str]:
    return [t for t in s.loop_order if s.tiling(t).count > 1]


def test_layer_files_show_and_follow_their_schedules(tmp_path, resnet16):
    ns = resnet16
    p = generate(ns, tmp_path / "r16")
    seen_psum = seen_border = False
    for i, (layer, s) in enumerate(zip(ns.layers.layers, ns.schedules)):
        text = (p.path / "layers" / f"layer_{i:02d}.c").read_text()
        assert f"'{layer.name}'" in text.split("*/")[0]
        if s.untiled:
            assert "untiled" in text and "tw_dma" not in text.split("*/", 1)[1]
            continue
        head, code = text.split("*/", 1)
        assert f"loop order (outer -> inner): {' '.join(s.loop_order)}" in head
        for t in s.tiles:
            assert re.search(rf"\b{t.dim}\s+{t.size}\s+{t.tile}\s+{t.count}\s+{t.border}\b", head), t
            if t.dim != "n":
                d = t.dim.upper()
                assert f"#define {d}_TILE {t.tile}\n#define N_{d} {t.count}\n#define {d}_BORDER {t.border}" in code
            seen_border |= t.count > 1 and t.border != t.tile
        for b in s.buffers:
            assert f"#define {b.name.upper()}_BUF {b.offset}\n#define {b.name.upper()}_BYTES {b.bytes}" in code
            assert re.search(rf"{b.name}\s+{b.copies} x\s+{b.bytes} @ {b.offset}", head)
        # the loops nest in the loop order (dims with one tile are not looped)
        loops = re.findall(r"for \(i_(\w+) = 0; i_\w+ < N_\w+; i_\w+\+\+\)", code)
        assert loops == _active_loops(s), (layer.name, loops, s.loop_order)
        counts = {t.dim: t.count for t in s.tiles}
        for op in operands(s.nest, s.const_bytes):
            if op.output:
                continue
            if s.buffering == 2 and fetch_count(s.loop_order, counts, op.dims) > 1:
                # double buffered: the next tile's load is issued before the current tile computes
                pre = code.index(f"load_{op.name}(a, {op.name}_buf[{op.name}_cur ^ 1], &tn)")
                assert pre < code.index("compute(&t, &m"), op.name
        if s.psum:
            seen_psum = True
            assert "TW_ACC_FIRST" in code and "psum" in code
        assert "tw_fork(CORES, body, a)" in code
    assert seen_psum and seen_border


def test_constants_tile_major_layout():
    """The portable family's constants (gap8 on that family): per k tile the bias, multiplier and
    shift blocks, then the weights tile-major when C is tiled."""
    from .pulp_targets import portable_target

    ns = schedule_network(lower(load_model(mlperf_path("ic_resnet8"))),
                          portable_target("gap8", l1_kb=16), "model")
    checked = set()
    for layer, s in zip(ns.layers.layers, ns.schedules):
        if layer.weights is None:
            continue
        k = layer_constants(layer, ns.layers, s)
        assert k.size == ns.const_bytes(layer)       # what the memory plan reserves
        words = np.frombuffer(k.blob[:k.w_offset], dtype="<i4")
        w = np.frombuffer(k.blob[k.w_offset:], dtype=np.int8)
        kt, nest = s.tiling("k"), s.nest
        mult = np.broadcast_to(np.atleast_1d(layer.requant.multiplier), (nest.K,))
        shift = np.broadcast_to(np.atleast_1d(layer.requant.shift), (nest.K,))
        ct = s.tiling("c") if nest.kind != "dwconv" else None
        for k0 in range(0, nest.K, kt.tile):
            kn = min(kt.tile, nest.K - k0)
            blk = words[k0 * 3: k0 * 3 + 3 * kn]
            assert np.array_equal(blk[:kn], layer.bias[k0:k0 + kn])
            assert np.array_equal(blk[kn:2 * kn], mult[k0:k0 + kn])
            assert np.array_equal(blk[2 * kn:], shift[k0:k0 + kn])
            if nest.kind == "dwconv":
                off = k0 * nest.FY * nest.FX
                got = w[off: off + kn * nest.FY * nest.FX].reshape(nest.FY, nest.FX, kn)
                assert np.array_equal(got, layer.weights[k0:k0 + kn].transpose(1, 2, 0))
                continue
            wt = layer.weights.reshape(nest.K, nest.FY, nest.FX, nest.C)
            for c0 in range(0, nest.C, ct.tile):
                cn = min(ct.tile, nest.C - c0)
                off = k0 * nest.FY * nest.FX * nest.C + c0 * kn * nest.FY * nest.FX
                got = w[off: off + kn * nest.FY * nest.FX * cn].reshape(kn, nest.FY, nest.FX, cn)
                assert np.array_equal(got, wt[k0:k0 + kn, :, :, c0:c0 + cn])
                checked.add(s.weights_tiled)
    assert checked == {True, False}


def test_weights_streamed_from_l3_bit_exact(tmp_path, c_cache):
    """At 13 kB of L2 four layers' constants (the pulp family's layout) live in L3, loaded at their
    own step or prefetched during the previous layer; the run reads exactly the planned L3
    bytes."""
    ns = example_ns(l1_kb=8, l2_kb=13)
    assert len(ns.memory.weights_in_l3) == 4 and not ns.l3.tilings
    lg = ns.layers
    report, p = validate_network(ns, tmp_path / "l3", make_inputs(lg, 3), cache=c_cache)
    assert report.bit_exact, report.to_json()
    assert report.l3_bytes_measured == report.l3_bytes_predicted > 0
    net = (p.path / "network.c").read_text()
    names = [l.name for l in lg.layers]
    prefetched = set()
    for name in ns.memory.weights_in_l3:
        i = names.index(name)
        buf = next(b for b in ns.memory.plan.buffers if b.name == f"w:{name}")
        read = net.index(f"l3_id[{i}] = tw_l3_read(L2 + "
                         f"{ns.memory.weight_offset(name) - p.manifest['l2_arena_base']}")
        # issued before the layer of the step that makes the buffer live runs, waited before its own
        prefetched.add(buf.first < i)
        assert net.index(f"tw_layer_{buf.first:02d}(&a)") > read
        assert read < net.index(f"tw_l3_wait(l3_id[{i}]);") < net.index(f"tw_layer_{i:02d}(&a)")
    assert prefetched == {True, False}
    assert (p.path / "weights_l3.bin").stat().st_size == p.manifest["l3_bytes"]


def test_pulp_variant_compiles_against_pmsis_stub(tmp_path):
    for name, ns in (("plain", example_ns(l1_kb=8)), ("l3", example_ns(l1_kb=8, l2_kb=13)),
                     ("gap9", example_ns("gap9"))):
        p = generate(ns, tmp_path / name)
        objs = compile_pulp(p, PMSIS_STUB, tmp_path / f"{name}_obj")
        names = {o.name for o in objs}
        assert "tw_hal_tw_hal_pulp.o" in names and "tw_hal_tw_hal_host.o" not in names
        assert ("tw_hal_tw_hal_pulp_l3.o" in names) == (name == "l3")
    with pytest.raises(TilewiseError):
        compile_pulp(generate(example_ns("stm32h7"), tmp_path / "stm"), PMSIS_STUB, tmp_path / "x")


def test_untiled_layers_on_an_l2_module_and_single_core_target(tmp_path, c_cache):
    """gap9's host-core module ("cpu") computes from L2 (untiled, one core); partition takes it
    for conv, add and dense here because the cluster of this copy of gap9 has no bindings for
    them. stm32h7: one Cortex-M core, weights in flash."""
    g9 = get_target("gap9")
    cl = g9.module("cluster")
    gone = ("conv2d", "add", "fully_connected")
    cl = replace(cl, bindings=tuple(b for b in cl.bindings if b.key.op not in gone))
    ns_fc = schedule_network(lower(load_model(EXAMPLE_ONNX)),
                             replace(g9, modules=(cl, g9.module("cpu"))), "model")
    for i, layer in enumerate(ns_fc.layers.layers):
        s = ns_fc.schedules[i]
        if layer.op in gone:
            assert s.module == "cpu" and s.untiled, (layer.name, s.module)
    xs = make_inputs(ns_fc.layers, 3)
    report, p = validate_network(ns_fc, tmp_path / "fc", xs, cache=c_cache)
    assert report.bit_exact, report.to_json()
    assert report.dma_bytes_predicted == sum(s.dma_bytes for s in ns_fc.schedules)
    assert "untiled" in (p.path / "layers" / "layer_03.c").read_text()
    report, _ = validate_network(example_ns("stm32h7", l1_kb=4), tmp_path / "stm", xs, cache=c_cache)
    assert report.bit_exact, report.to_json()


def test_untiled_reshape_and_softmax_run_from_l2(tmp_path, c_cache):
    """Layers of kind "other": a reshape that changes the HWC view (a byte copy) and a TFLite
    softmax, between tiled layers."""
    from tilewise.ir.graph import Graph, Node
    from tilewise.ir.ops import Op
    from tilewise.ir.params import MaxPoolParams, ReshapeParams, TfliteSoftmaxParams
    from tilewise.ir.tensor import QuantParams, Tensor

    q = QuantParams((0.05,), (3,))
    t = {"x": Tensor("x", (1, 4, 6, 3), "int8", q), "r": Tensor("r", (1, 6, 4, 3), "int8", q),
         "p": Tensor("p", (1, 3, 2, 3), "int8", q), "f": Tensor("f", (1, 18), "int8", q),
         "y": Tensor("y", (1, 18), "int8", QuantParams((1 / 256,), (-128,)))}
    nodes = (Node("r", Op.RESHAPE, ("x",), ("r",), ReshapeParams(shape=(1, 6, 4, 3))),
             Node("p", Op.MAX_POOL, ("r",), ("p",), MaxPoolParams(kernel=(2, 2), stride=(2, 2), pads=(0, 0, 0, 0),
                                                                  qmin=-128, qmax=127)),
             Node("f", Op.RESHAPE, ("p",), ("f",), ReshapeParams(shape=(1, 18))),
             Node("y", Op.SOFTMAX, ("f",), ("y",), TfliteSoftmaxParams(input_multiplier=1476210432,
                                                                      input_left_shift=24, diff_min=-124)))
    lg = lower(Graph("other", t, nodes, ("x",), ("y",)))
    assert [l.op for l in lg.layers] == [Op.RESHAPE, Op.MAX_POOL, Op.RESHAPE, Op.SOFTMAX]
    ns = schedule_network(lg, get_target("gap8", l1_kb=1), "model")
    report, p = validate_network(ns, tmp_path / "other", make_inputs(lg, 4), cache=c_cache)
    assert report.bit_exact, report.to_json()
    assert "memmove" in (p.path / "layers" / "layer_00.c").read_text()
    assert "tw_softmax_s8" in (p.path / "layers" / "layer_03.c").read_text()


def test_what_no_kernel_runs_is_refused_at_partition_in_one_sentence(tmp_path):
    # (layers tiled at L3 -> L2 are generated: tests/test_codegen_l3.py)
    lg = layer_graph(LayerSpec("dwconv", c=4, k=4, h=5, w=5, fy=3, fx=3, pads=(1, 1, 1, 1)), 0)
    lg.tensors["x"] = replace(lg.tensors["x"], dtype="int16")
    with pytest.raises(TilewiseError, match=r"layer 'y' \(depthwise\): no module of gap8 runs "
                                            r"depthwise tflite 16x8->8") as e:
        schedule_network(lg, get_target("gap8"), "model")
    assert "\n" not in str(e.value)


def test_cli_generate(tmp_path, capsys):
    out = tmp_path / "cli"
    assert cli_main(["generate", str(EXAMPLE_ONNX), "--target", "gap8", "--l1", "8", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert load_project(out).manifest["target"] == "gap8"
    assert cli_main(["generate", str(EXAMPLE_ONNX), "--target", "gap8", "--l2", "2", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tilewise: error: layer") and err.count("\n") == 0
    assert cli_main(["generate", str(EXAMPLE_ONNX), "--target", "nope", "-o", str(out)]) == 2
