"""Validation against an exporter's own golden data (validate/golden_files.py, own_inputs.py) and
the input code types of integer exports (--input-dtype, inferred from --data).

A NEMO-style network built here, its DORY folder written from onnxruntime's own tensors (HWC and
CHW, with and without line continuations): bit-exact, every layer compared; a changed value is
exit 1 naming the first wrong layer; malformed folders are one sentence, exit 2. The matching of
golden tensors to the network's (order, shape, dtype) on hand-made lists. The real NEMO exports'
DORY folders and Deeploy's inputs/outputs/activations.npz from ../shared/models/integer_onnx
(fail, not skip, under TILEWISE_REQUIRE_MODELS=1): what each form of golden data exercises here
— every export on both targets is tests/test_integer_onnx.py's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from tilewise.cli import main as cli_main
from tilewise.validate.golden_files import GoldenTensor, match, orders, read_dory_file

from .conftest import absent, models_dir
from .nemo_models import NemoNet

# -- a NEMO-style network and its DORY folder ------------------------------------------------------

def nemo_net(path: Path) -> tuple[Path, list[str]]:
    """Conv → chain → Conv (stride 2) → chain → Flatten → Gemm → chain; the layer outputs."""
    net = NemoNet("golden_net", (1, 3, 8, 6), seed=11)
    rng = net.rng
    div = 2 ** 21 - 1
    a = net.conv("x", 3, 5, 3, pads=1, wmax=20)
    a = net.cast_requant(a, rng.integers(1, 8, (1, 5, 1, 1)), rng.integers(-3000, 3000, (1, 5, 1, 1)),
                         int(div * 0.002) | 1, div, 0, 255)
    b = net.conv(a, 5, 4, 3, pads=1, stride=2, wmax=15)
    b = net.cast_requant(b, rng.integers(1, 6, (1, 4, 1, 1)), rng.integers(-2000, 2000, (1, 4, 1, 1)),
                         int(div * 0.004) | 1, div, 0, 255)
    y = net.gemm(net.flatten(b), 4 * 4 * 3, 6, wmax=25)
    y = net.cast_requant(y, rng.integers(1, 4, (6,)), rng.integers(-900, 900, (6,)),
                         int(div * 0.02) | 1, div, -128, 127)
    return net.save(path, y), [a, b, y]


def onnxruntime_tensors(model: Path, names: list[str], x: np.ndarray) -> list[np.ndarray]:
    """The ONNX tensors `names` as onnxruntime computes them (a copy with them as outputs)."""
    import onnxruntime as ort

    m = onnx.load(str(model))
    m.graph.ClearField("output")
    m.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n) for n in names)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(names, {"x": x.astype(np.float32)})


def write_dory(path: Path, name: str, arr: np.ndarray, order: str, backslash: bool = False) -> None:
    """One DORY file: `arr` (NCHW, batch 1) in HWC or CHW, values as `36.000,`."""
    a = arr[0]
    if order == "HWC" and a.ndim == 3:
        a = a.transpose(1, 2, 0)
    end = ",\\" if backslash else ","
    lines = [f"# {name} (shape [{', '.join(str(d) for d in a.shape)}]){end}"]
    lines += [f"{v:.3f}{end}" for v in a.reshape(-1)]
    path.write_text("\n".join(lines) + "\n")


def dory_folder(tmp: Path, order: str = "HWC", backslash: bool = False) -> tuple[Path, Path]:
    model, layers = nemo_net(tmp / "net.onnx")
    x = np.random.default_rng(5).integers(0, 256, (1, 3, 8, 6))
    folder = tmp / f"golden_{order}"
    folder.mkdir()
    write_dory(folder / "input.txt", "input", x, order, backslash)
    for k, (name, arr) in enumerate(zip(("relu1", "relu2", "fc"),
                                        onnxruntime_tensors(model, layers, x))):
        write_dory(folder / f"out_layer{k}.txt", name, arr, order, backslash)
    return model, folder


@pytest.mark.parametrize("order,backslash", [("HWC", False), ("CHW", True)])
def test_dory_folder_bit_exact_every_layer(tmp_path, capsys, order, backslash):
    model, folder = dory_folder(tmp_path, order, backslash)
    rc = cli_main(["validate", str(model), "--target", "gap8", "--golden", str(folder), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"], out["mismatches"]
    rows = out["golden_layers"]
    assert [r["name"] for r in rows] == ["relu1", "relu2", "fc"]
    assert [r["mismatches"] for r in rows] == [0, 0, 0]
    assert [r["golden_mismatches"] for r in rows] == [0, 0, 0]
    assert [r["order"] for r in rows][:2] == [order, order]
    assert all(r["ir"] and r["layer"] for r in rows) and rows[2]["elements"] == 6


def test_a_wrong_golden_value_names_the_first_wrong_layer(tmp_path, capsys):
    model, folder = dory_folder(tmp_path)
    lines = (folder / "out_layer1.txt").read_text().splitlines()
    lines[7] = f"{float(lines[7].rstrip(',')) + 1:.3f},"
    (folder / "out_layer1.txt").write_text("\n".join(lines) + "\n")
    rc = cli_main(["validate", str(model), "--target", "stm32h7", "--golden", str(folder),
                   "-o", str(tmp_path / "p")])
    text = capsys.readouterr().out
    assert rc == 1, text
    assert "first wrong layer: out_layer1.txt 'relu2'" in text and "1 of 48 elements differ" in text


def test_a_golden_file_without_its_tensor_is_reported(tmp_path, capsys):
    """A file whose values fit a tensor's count but no tensor is left for it in order: in the
    report, not hidden, and not a mismatch of the C."""
    model, folder = dory_folder(tmp_path)
    shutil.copy(folder / "out_layer0.txt", folder / "out_layer3.txt")
    rc = cli_main(["validate", str(model), "--target", "gap8", "--golden", str(folder), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0, out["mismatches"]
    last = out["golden_layers"][3]
    assert last["ir"] is None and last["mismatches"] is None and "other golden tensors" in last["note"]


def _bad_folders(tmp: Path):
    model, good = dory_folder(tmp)

    def variant(name: str, edit) -> Path:
        d = tmp / name
        shutil.copytree(good, d)
        edit(d)
        return d

    def rewrite(f: Path, fn) -> None:
        f.write_text(fn(f.read_text()))

    cases = [
        (variant("no_input", lambda d: (d / "input.txt").unlink()), "no input.txt"),
        (variant("extra_value", lambda d: rewrite(d / "out_layer2.txt", lambda t: t + "3.000,\n")),
         "but the file holds 7 values"),
        (variant("no_count", lambda d: rewrite(d / "out_layer2.txt", lambda t: t.replace(
            "(shape [6])", "(shape [7])") + "3.000,\n")), "no tensor of the network has 7"),
        (variant("fraction", lambda d: rewrite(d / "out_layer0.txt", lambda t: t.replace(
            "\n", "\n0.500,\n", 1).replace("(shape [8, 6, 5])", "(shape [241])"))),
         "not an integer code"),
        (variant("word", lambda d: rewrite(d / "out_layer0.txt", lambda t: t + "abc\n")),
         "not a number"),
        (variant("nothing", lambda d: [f.unlink() for f in d.glob("out_layer*.txt")]),
         "no out_layerN.txt and no output.txt"),
        (tmp / "missing", "no such directory"),
    ]
    return model, cases


def test_malformed_golden_folders_are_one_sentence(tmp_path, capsys):
    model, cases = _bad_folders(tmp_path)
    for folder, says in cases:
        rc = cli_main(["validate", str(model), "--target", "gap8", "--golden", str(folder)])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and err.startswith("tilewise: error: ") and "\n" not in err, (folder, err)
        assert says in err and "Traceback" not in err, (folder, err)
    rc = cli_main(["validate", str(model), "--target", "gap8", "--golden", str(tmp_path),
                   "--data", "x.npy"])
    assert rc == 2 and "--golden takes the input" in capsys.readouterr().err


def test_dory_header_forms(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("#  (shape [1, 2, 2]),\\\n1.000,\\\n-2.000,\\\n3.000,\\\n4.000,\\\n")
    t = read_dory_file(f)
    assert t.name == "a" and t.shape == (1, 2, 2) and t.values.tolist() == [1, -2, 3, 4]
    # [C, H, W] and [H, W, C] headers against an ONNX [1, C, H, W] tensor; 1-D [W, C]; dense [K]
    assert orders((2, 3, 4), 24, (1, 2, 3, 4)) == ["CHW"]
    assert orders((3, 4, 2), 24, (1, 2, 3, 4)) == ["HWC"]
    assert orders((140, 2), 280, (1, 2, 140)) == ["HWC"]
    assert orders((1, 200, 200), 40000, (1, 1, 200, 200)) == ["CHW"]
    assert orders((4,), 4, (1, 4)) == ["CHW"] and orders((1, 2), 2, (1, 2)) == ["CHW"]
    assert orders((2, 2, 2), 8, (1, 2, 2, 2)) == ["CHW", "HWC"]
    assert orders((5,), 5, (1, 4)) == []


def _t(name: str, shape: tuple[int, ...], lo: int, hi: int) -> GoldenTensor:
    n = int(np.prod(shape))
    return GoldenTensor(name, name, shape, np.linspace(lo, hi, n).round().astype(np.int64))


def _c(name: str, onnx_shape: tuple[int, ...], dtype: str) -> dict:
    return {"onnx": name, "ir": name, "to_ir_perm": tuple(range(len(onnx_shape))),
            "onnx_shape": onnx_shape, "dtype": dtype}


def test_matching_by_order_shape_and_dtype():
    s = (1, 4, 3, 3)
    g = (3, 3, 4)
    # Deeploy: a convolution's int32 output, then its requantized activation; the network keeps
    # the second only
    m = match([_t("acc", g, -5000, 7000), _t("act", g, -128, 127)], [_c("y", s, "int8")])
    assert [(x.golden.name, x.tensor and x.tensor["ir"]) for x in m] == [("acc", None), ("act", "y")]
    # consecutive layers of one shape pair in order; an int32 tensor of the shape (a residual
    # sum before its requantization) is passed over by an 8-bit golden tensor
    m = match([_t("r1", g, 0, 255), _t("r2", g, 0, 255)],
              [_c("t1", s, "uint8"), _c("sum", s, "int32"), _c("t2", s, "uint8")])
    assert [x.tensor["ir"] for x in m] == ["t1", "t2"]
    # a golden tensor of no tensor's shape stays unmatched, the others still pair in order
    m = match([_t("a", g, 0, 9), _t("odd", (7,), 0, 9), _t("fc", (2,), -3, 3)],
              [_c("t", s, "uint8"), _c("fc", (1, 2), "int8")])
    assert [x.tensor and x.tensor["ir"] for x in m] == ["t", None, "fc"]



def test_matching_by_value_before_order():
    """Golden tensors listed out of execution order (Deeploy's EEGFormer) pair with the tensors
    whose golden-model values equal theirs; one that equals none still pairs by order."""
    s, g = (1, 66, 16), (1, 66, 16)
    a, b, c = _t("a", g, -100, 100), _t("b", g, -50, 120), _t("c", g, 0, 127)
    cands = [_c("ta", s, "int8"), _c("tb", s, "int8"), _c("tc", s, "int8")]
    values = {"ta": a.values, "tb": b.values, "tc": c.values + 1}
    m = match([b, a, c], cands, values=values)
    assert [x.tensor["ir"] for x in m] == ["tb", "ta", "tc"]
    # without the values, the order-keeping alignment pairs them in list order
    assert [x.tensor["ir"] for x in match([b, a, c], cands)] == ["ta", "tb", "tc"]


def test_matching_keeps_the_rest_between_its_value_equal_neighbours():
    """CCT: a projection's int32 accumulator listed between two activations the network keeps (it
    fuses the accumulator into its dense layer) pairs with nothing, not with a later int32 tensor
    of its size (the attention's product with V)."""
    s, g = (1, 64, 12), (1, 64, 12)
    a, acc, b = _t("a", g, -100, 100), _t("acc", g, -20000, 20000), _t("b", g, -50, 120)
    cands = [_c("ta", s, "int8"), _c("tb", s, "int8"), _c("av", s, "int32")]
    values = {"ta": a.values, "tb": b.values, "av": acc.values + 1}
    m = match([a, acc, b], cands, values=values)
    assert [x.tensor and x.tensor["ir"] for x in m] == ["ta", None, "tb"]
    # after the last value-equal pair it still pairs by order
    m = match([a, b, acc], cands, values=values)
    assert [x.tensor and x.tensor["ir"] for x in m] == ["ta", "tb", "av"]

# -- input code types ----------------------------------------------------------------------------

def test_input_dtype_option_and_inference(tmp_path, capsys):
    from .test_multi_io import int_add_model, two_io_tflite

    model = int_add_model(tmp_path / "int_add.onnx")
    for bad, says in (("int7", "'int7' is not one of int8, uint8, int16, int32"),
                      ("a=int8,a=uint8", "'a' is given twice"), ("a=", "give DTYPE or NAME=DTYPE"),
                      ("zz=int8", "'zz' is not an input")):
        for cmd in (["analyze", str(model)], ["generate", str(model), "--target", "gap8", "-o",
                                              str(tmp_path / "g")], ["validate", str(model),
                                                                     "--target", "gap8"]):
            rc = cli_main([*cmd, "--input-dtype", bad])
            err = capsys.readouterr().err.strip()
            assert rc == 2 and "\n" not in err and says in err, (cmd, bad, err)
    rc = cli_main(["analyze", str(two_io_tflite(tmp_path / "t.tflite")), "--input-dtype", "int8"])
    assert rc == 2 and "TFLite model types its inputs itself" in capsys.readouterr().err
    # inferred from the data: signed values within 8 bits are int8, one note names the option
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "d.npz", a=rng.integers(-100, 100, (2, 1, 4, 3, 3)).astype(np.float32),
             b=rng.integers(0, 200, (2, 1, 4, 3, 3)).astype(np.float64))
    rc = cli_main(["validate", str(model), "--target", "gap8", "--data", str(tmp_path / "d.npz"),
                   "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"], out["mismatches"]
    note = next(n for n in out["notes"] if "input codes" in n)
    assert "'a' int8" in note and "'b' uint8" in note and "--input-dtype a=int8,b=uint8" in note
    assert out["metrics"]["data"]["values"] == "integer codes in floats"
    # int64 containers default to int32 codes, whose sum the frontend refuses (beyond int32):
    # read with the data's own type instead
    wide = int_add_model(tmp_path / "int64_add.onnx", onnx.TensorProto.INT64)
    np.savez(tmp_path / "w.npz", rng.integers(-20000, 20000, (2, 1, 4, 3, 3)),
             rng.integers(-300, 300, (2, 1, 4, 3, 3)))
    assert cli_main(["analyze", str(wide)]) == 2 and "beyond int32" in capsys.readouterr().err
    rc = cli_main(["validate", str(wide), "--target", "stm32h7", "--data", str(tmp_path / "w.npz"),
                   "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"], out["mismatches"]
    assert any("--input-dtype int16`" in n for n in out["notes"]), out["notes"]
    # a non-integer code is one sentence
    np.savez(tmp_path / "f.npz", a=np.full((1, 1, 4, 3, 3), 0.5, np.float32),
             b=np.zeros((1, 1, 4, 3, 3), np.float32))
    rc = cli_main(["validate", str(model), "--target", "gap8", "--data", str(tmp_path / "f.npz")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "non-integer values" in err and "f.npz" in err, err


# -- the real exports -------------------------------------------------------------------------------

def integer_onnx(rel: str) -> Path:
    d = models_dir() / "integer_onnx" / rel
    if not d.is_dir():
        absent(f"integer ONNX export not found at {d} (set TILEWISE_MODELS)")
    return d


#: one DORY folder in HWC, one in CHW (every export on both targets: tests/test_integer_onnx.py)
NEMO = {"PenguiNet_64": 9, "SmartAgri-net": 12}


@pytest.mark.parametrize("name,target", [("PenguiNet_64", "gap8"), ("SmartAgri-net", "stm32h7")])
def test_nemo_exports_match_their_dory_golden_data(name, target, capsys):
    d = integer_onnx(f"nemo/{name}")
    rc = cli_main(["validate", str(next(d.glob("*.onnx"))), "--target", target, "--golden", str(d),
                   "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"], out["mismatches"]
    rows = out["golden_layers"]
    assert len(rows) == NEMO[name] and all(r["mismatches"] == 0 for r in rows), rows
    assert {r["order"] for r in rows[:2]} == {"CHW" if name == "SmartAgri-net" else "HWC"}


def test_quantlab_dronet_layers_and_its_float_tail_output(capsys):
    """Every out_layerN of QuantLab's Dronet bit-exact; output.txt is the model's output after the
    float tail the network does not compile: said, not compared."""
    d = integer_onnx("quantlab_dory/Dronet")
    rc = cli_main(["validate", str(next(d.glob("*.onnx"))), "--target", "gap8", "--golden", str(d),
                   "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"], out["mismatches"]
    assert [r["mismatches"] for r in out["golden_layers"]] == [0] * 15
    assert any("output.txt" in n and "not compared" in n for n in out["notes"])


@pytest.mark.parametrize("rel,compared", [("kernels/Add/MultIO", 0), ("kernels/Conv/Regular_2D_RQ", 0),
                                          ("kernels/MatMul/Regular", 0), ("kernels/ReduceMean", 0),
                                          ("models/CNN_Linear2", 9)])
def test_deeploy_exports_match_their_npz(rel, compared, capsys):
    """Four inputs and two outputs (Add/MultIO); weights listed in inputs.npz (Conv, MatMul); int32
    containers of int8 codes whose default type the frontend refuses (MatMul/Regular); no
    onnxruntime reference where its float result is not Deeploy's integer (ReduceMean);
    activations.npz layer by layer (CNN_Linear2)."""
    d = integer_onnx(f"deeploy/{rel}")
    rc = cli_main(["validate", str(d / "network.onnx"), "--target", "gap8", "--data",
                   str(d / "inputs.npz"), "--expected", str(d / "outputs.npz"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["bit_exact"], out["mismatches"]
    if rel == "kernels/ReduceMean":
        assert out["reference"].startswith("no reference runtime") and out["golden_vs_reference"] is None
    per_output = out["metrics"].get("outputs") or [out["metrics"]]
    assert all(o["vs_expected"]["mismatched_elements"] == 0 for o in per_output)
    rows = out.get("golden_layers") or []
    assert sum(1 for r in rows if r["mismatches"] == 0) == compared
    assert all(r["mismatches"] in (0, None) for r in rows)
