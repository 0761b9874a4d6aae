"""Networks with several inputs and outputs, end to end (codegen/network_c.py, golden/samples.py).

`tw_network_run(in0, in1, …, out0, out1, …, l1, l2)` in graph order with TW_INPUT<k>_* /
TW_OUTPUT<k>_* per tensor (the first also TW_INPUT_* / TW_OUTPUT_*) and TW_NETWORK_RUN_IO; an
output that is a network input, and one tensor given as two outputs, come out as copies; int8,
uint8 (stored u - 128: copied and flipped), int16, int32 and packed uint4 inputs and outputs; the
host harness (a file per input and output), `make run`, --name, `validate --data` with a .npz per
tensor by name or order; bit-exact on gap8 and stm32h7 on the host, once under QEMU and GVSoC.
A one-input, one-output network keeps its signature exactly.
"""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tilewise.cli import main as cli_main
from tilewise.codegen.project import generate
from tilewise.examples import EXAMPLE_ONNX
from tilewise.frontend import load_model
from tilewise.passes import lower
from tilewise.pipeline import schedule_network
from tilewise.targets.registry import get_target
from tilewise.validate import make_inputs
from tilewise.validate.check import check_project, golden_outputs, new_report, validate_path

from .tflite_builder import ACT, SAME, ModelBuilder

#: per dtype: (x scale, zero point), (y …), (a …): TFLite's 16x8 ops take symmetric int16
QUANT = {"int8": ((0.02, 1), (0.03, -2), (0.04, 3)),
         "uint8": ((0.02, 120), (0.03, 131), (0.04, 125)),
         "int16": ((0.0005, 0), (0.0007, 0), (0.001, 0))}


def two_io_tflite(path, dtype: str = "int8"):
    """x, y → ADD → a → MAX_POOL → m; outputs (m, a, y, a): a network input given back, one
    tensor given twice."""
    (sx, zx), (sy, zy), (sa, za) = QUANT[dtype]
    b = ModelBuilder()
    x = b.input("x", (1, 5, 4, 3), dtype, scale=sx, zero_point=zx)
    y = b.input("y", (1, 5, 4, 3), dtype, scale=sy, zero_point=zy)
    a = b.tensor("a", (1, 5, 4, 3), dtype, scale=sa, zero_point=za)
    b.op("ADD", [x, y], [a], "AddOptions", FusedActivationFunction=ACT["NONE"])
    m = b.tensor("m", (1, 5, 4, 3), dtype, scale=sa, zero_point=za)
    b.op("MAX_POOL_2D", [a], [m], "Pool2DOptions", Padding=SAME, StrideW=1, StrideH=1,
         FilterWidth=2, FilterHeight=2, FusedActivationFunction=ACT["NONE"])
    for t in (m, a, y, a):
        b.output(t)
    return b.save(path)


def _schedule(model, target="gap8", **kw):
    return schedule_network(lower(load_model(model, **kw)), get_target(target), "model")


def test_the_c_api_of_several_inputs_and_outputs(tmp_path):
    model = two_io_tflite(tmp_path / "two.tflite")
    p = generate(_schedule(model), tmp_path / "p")
    h = (p.path / "network.h").read_text()
    assert ("int tw_network_run(const int8_t *in0, const int8_t *in1, int8_t *out0, int8_t *out1, "
            "int8_t *out2, int8_t *out3, void *l1, void *l2);") in h
    for macro in ("TW_INPUT_BYTES 60", "TW_INPUT0_BYTES 60", "TW_INPUT1_ZERO_POINT (-2)",
                  "TW_OUTPUT3_BYTES 60", "TW_OUTPUT_BYTES 60", "TW_NETWORK_INPUTS 2",
                  "TW_NETWORK_OUTPUTS 4", "TW_NETWORK_OUTPUT_SIZES { 60, 60, 60, 60 }",
                  "TW_NETWORK_OUTPUT_TOTAL_BYTES 240"):
        assert f"#define {macro}" in h, macro
    assert re.search(r"#define TW_NETWORK_RUN_IO\(ins, outs, \.\.\.\) tw_network_run\(\(ins\)\[0\], "
                     r"\(ins\)\[1\], \(outs\)\[0\], \(outs\)\[1\], \(outs\)\[2\], \(outs\)\[3\], "
                     r"__VA_ARGS__\)", h)
    c = (p.path / "network.c").read_text()
    assert "memcpy(out2, in1, TW_OUTPUT2_BYTES);" in c      # 'y' is a network input
    m = p.manifest
    assert [t["name"] for t in m["inputs"]] == ["x", "y"]
    assert [t["name"] for t in m["outputs"]] == ["m", "a", "y", "a"]
    assert "`in0`, `in1`" in (p.path / "README.md").read_text()
    # make run: one file per input and per output, the outputs the golden model's
    lg = _schedule(model).layers
    run = subprocess.run(["make", "-s", "-C", str(p.path), "run"], capture_output=True, text=True)
    assert run.returncode == 0 and "TW_STATS" in run.stdout, run.stderr
    x = tuple(np.fromfile(p.path / f"input{k}.bin", np.int8).reshape(1, 5, 4, 3) for k in (0, 1))
    for k, want in enumerate(golden_outputs(lg, [x])[0]):
        assert np.array_equal(np.fromfile(p.path / f"output{k}.bin", np.int8),
                              want.reshape(-1)), k


def test_one_input_one_output_keeps_its_signature(tmp_path):
    p = generate(_schedule(EXAMPLE_ONNX), tmp_path / "p")
    h = (p.path / "network.h").read_text()
    assert "int tw_network_run(const int8_t *input, int8_t *output, void *l1, void *l2);" in h
    assert "TW_INPUT0_" not in h and "#define TW_NETWORK_INPUTS 1" in h
    assert "memcpy(output, L2 + " in (p.path / "network.c").read_text()
    assert (p.path / "input.bin").exists() and not (p.path / "input0.bin").exists()


@pytest.mark.parametrize("target", ["gap8", "stm32h7"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_bit_exact_on_the_host(tmp_path, dtype, target):
    model = two_io_tflite(tmp_path / f"two_{dtype}.tflite", dtype)
    r = validate_path(model, get_target(target), n_random=4, out_dir=tmp_path / "p")
    assert r.bit_exact and r.golden_vs_reference == 0, r.mismatches
    assert r.reference.startswith("LiteRT")


def test_a_wrong_output_copy_is_a_mismatch_naming_the_output(tmp_path):
    """The comparison can fail: network.c edited to copy 'a' into out0 (which is 'm')."""
    model = two_io_tflite(tmp_path / "two.tflite")
    ns = _schedule(model)
    p = generate(ns, tmp_path / "p")
    c = (p.path / "network.c").read_text()
    src = re.search(r"memcpy\(out1, (L2 \+ \d+),", c).group(1)
    edited = re.sub(r"memcpy\(out0, L2 \+ \d+,", f"memcpy(out0, {src},", c)
    assert edited != c
    (p.path / "network.c").write_text(edited)
    lg = ns.layers
    xs = make_inputs(lg, 2)
    report = check_project(new_report(ns, p, "two", len(xs), None), p, lg, xs,
                           golden_outputs(lg, xs), locate=False)
    bad = [m for m in report.mismatches if m.kind == "output"]
    assert bad and {m.output for m in bad} == {"m"}, report.mismatches


def test_name_prefix_renames_every_indexed_macro(tmp_path, capsys):
    model = two_io_tflite(tmp_path / "two.tflite")
    rc = cli_main(["validate", str(model), "--target", "gap8", "--inputs", "2", "--name", "kws",
                   "-o", str(tmp_path / "v"), "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["bit_exact"]
    h = (tmp_path / "v" / "network.h").read_text()
    assert "int kws_network_run(const int8_t *in0" in h and "#define KWS_INPUT1_BYTES" in h
    assert "#define KWS_NETWORK_RUN_IO(" in h and "TW_" not in h.replace("TW_DUMP_LAYERS", "") \
        .replace("TW_PROFILE_LAYERS", "")


def uint4_two_io(path):
    """Two QDQ convs on two uint4 inputs (packed at the C API), their uint4 outputs and the second
    input given back."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    for k in ("", "2"):
        w = rng.integers(-7, 8, (4, 3, 3, 3))
        nodes += [helper.make_node("DequantizeLinear", [f"xq{k}", "xs", "xz"], [f"xd{k}"]),
                  helper.make_node("DequantizeLinear", [f"w{k}", "ws", "wz"], [f"wd{k}"], axis=0),
                  helper.make_node("Conv", [f"xd{k}", f"wd{k}"], [f"y{k}"], pads=[1, 1, 1, 1]),
                  helper.make_node("QuantizeLinear", [f"y{k}", "ys", "yz"], [f"yq{k}"])]
        inits.append(helper.make_tensor(f"w{k}", TensorProto.INT4, [4, 3, 3, 3], w.reshape(-1).tolist()))
    inits += [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.1]),
              helper.make_tensor("xz", TensorProto.UINT4, [], [3]),
              helper.make_tensor("ws", TensorProto.FLOAT, [4], [0.05, 0.1, 0.07, 0.02]),
              helper.make_tensor("wz", TensorProto.INT4, [4], [0] * 4),
              helper.make_tensor("ys", TensorProto.FLOAT, [], [0.3]),
              helper.make_tensor("yz", TensorProto.UINT4, [], [7])]
    ins = [helper.make_tensor_value_info(n, TensorProto.UINT4, [1, 3, 5, 5]) for n in ("xq", "xq2")]
    outs = [helper.make_tensor_value_info("yq", TensorProto.UINT4, [1, 4, 5, 5]),
            helper.make_tensor_value_info("yq2", TensorProto.UINT4, [1, 4, 5, 5])]
    g = helper.make_graph(nodes, "io4x2", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, str(path))
    return path


def test_packed_uint4_inputs_and_outputs(tmp_path):
    model = uint4_two_io(tmp_path / "io4x2.onnx")
    r = validate_path(model, get_target("stm32h7"), n_random=4, out_dir=tmp_path / "p")
    assert r.bit_exact, r.mismatches
    h = (tmp_path / "p" / "network.h").read_text()
    assert "#define TW_INPUT1_BYTES 38" in h and "#define TW_OUTPUT1_BYTES 50" in h


def int_add_model(path, container=TensorProto.FLOAT):
    """An integer export's two-input Add and Sub (float32 or int64 containers of codes, NEMO
    style) with the second input given back: int16 inputs make int32 outputs."""
    vi = [helper.make_tensor_value_info(n, container, [1, 4, 3, 3]) for n in "absd"]
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Sub", ["a", "b"], ["d"])]
    g = helper.make_graph(nodes, "int_add", vi[:2], [vi[2], vi[3], vi[1]])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, str(path))
    return path


def test_int16_inputs_and_int32_outputs(tmp_path, capsys):
    model = int_add_model(tmp_path / "int_add.onnx")
    lg = lower(load_model(model, {"*": "int16"}))
    assert [lg.tensors[t].dtype for t in (*lg.inputs, *lg.outputs)] == \
        ["int16", "int16", "int32", "int32", "int16"]
    rc = cli_main(["validate", str(model), "--target", "gap8", "--input-dtype", "int16",
                   "--inputs", "3", "--json", "-o", str(tmp_path / "p")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"] and out["golden_vs_reference"] == 0, out["mismatches"]
    assert "#define TW_OUTPUT0_TYPE int32_t" in (tmp_path / "p" / "network.h").read_text()


def test_data_of_several_inputs_and_outputs(tmp_path, capsys):
    """A .npz keyed by the inputs' names (any order) or in their order; expected outputs per
    output; the wrong number of arrays and a .npy for two inputs are one sentence, exit 2."""
    model = two_io_tflite(tmp_path / "two.tflite")
    lg = _schedule(model).layers
    xs = make_inputs(lg, 3)
    x = np.stack([s[0] for s in xs])
    y = np.stack([s[1] for s in xs])
    want = golden_outputs(lg, xs)
    np.savez(tmp_path / "named.npz", y=y, x=x)
    np.savez(tmp_path / "ordered.npz", x, y)
    np.savez(tmp_path / "expected.npz", *[np.stack([w[k] for w in want]) for k in range(4)])
    bad = [np.stack([w[k] for w in want]) for k in range(4)]
    bad[1] = bad[1].copy()
    bad[1][2, 0, 1, 2, 0] ^= 1
    np.savez(tmp_path / "bad.npz", *bad)
    np.savez(tmp_path / "three.npz", x, y, x)
    np.save(tmp_path / "one.npy", x)
    base = ["validate", str(model), "--target", "stm32h7"]
    for data in ("named.npz", "ordered.npz"):
        rc = cli_main([*base, "--data", str(tmp_path / data), "--expected",
                       str(tmp_path / "expected.npz"), "--json"])
        out = json.loads(capsys.readouterr().out)
        assert rc == 0 and out["bit_exact"], (data, out["mismatches"])
        assert [o["vs_expected"]["mismatched_elements"] for o in out["metrics"]["outputs"]] == [0] * 4
    rc = cli_main([*base, "--data", str(tmp_path / "named.npz"), "--expected",
                   str(tmp_path / "bad.npz"), "--json", "-o", str(tmp_path / "kept")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and [m for m in out["mismatches"] if m["kind"] == "output"] == [
        {"kind": "output", "against": "expected", "input": 2, "elements": 1, "output": "a"}]
    for data, says in (("three.npz", "3 arrays for 2 tensors"),
                       ("one.npy", "the model has 2 inputs")):
        rc = cli_main([*base, "--data", str(tmp_path / data)])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and err.startswith("tilewise: error: ") and "\n" not in err, err
        assert data in err and says in err, err


@pytest.mark.parametrize("target,on", [("stm32h7", "qemu"), ("pulp-open", "gvsoc")])
def test_bit_exact_on_the_isa(tmp_path, target, on):
    """The firmware mains through TW_NETWORK_RUN_IO: every output of every inference in one
    TW_OUT line, split and compared per output (a missing simulator fails under
    TILEWISE_REQUIRE_MODELS=1, test_tflite_repair.py `validate_on_isa`)."""
    from .test_tflite_repair import validate_on_isa

    validate_on_isa(two_io_tflite(tmp_path / "two.tflite"), target, on, tmp_path / "p")
    table = (tmp_path / "p" / "firmware" / "inputs.c").read_text()
    assert "tw_fw_inputs_1[TW_FW_INPUTS]" in table and "tw_fw_input_table" in table


def test_gap_sdk_main_of_several_inputs_and_outputs_compiles(tmp_path):
    """The GAP SDK application's main.c (through TW_NETWORK_RUN_IO and inputs.c's table) and
    inputs.c compile against the PMSIS stub with -Wall -Wextra -Werror, and call the network (the
    whole application's build: test_codegen_api.py)."""
    from .test_codegen_api import STUB

    p = generate(_schedule(two_io_tflite(tmp_path / "two.tflite")), tmp_path / "p", c_name="two")
    build = subprocess.run(["make", "-s", "-C", str(p.path / "gap_sdk"), "all",
                            f"RULES_DIR={STUB / 'rules'}", "APP_SRCS=main.c inputs.c"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    syms = subprocess.run(["nm", str(p.path / "gap_sdk" / "build_stub" / "main_c.o")],
                          capture_output=True, text=True, check=True).stdout
    assert re.search(r" U two_network_run$", syms, re.M)
    assert "two_fw_inputs_1[TW_FW_INPUTS]" in (p.path / "gap_sdk" / "inputs.c").read_text()
