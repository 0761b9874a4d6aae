"""Build tilewise's bundled example model, `example_cnn.onnx`: a small int8 CNN for a 32×32 RGB image.

    input 1×3×32×32 (float, quantized by the model's first QuantizeLinear)
    conv 3×3/2, 3→16, ReLU                       16×16×16
    depthwise 3×3/1, ReLU -> pointwise 1×1, 16→16  \\ residual add, ReLU
    max pool 2×2/2                                8×8×16
    conv 3×3/1, 16→32, ReLU                       8×8×32
    global average pool, flatten, dense 32→10     logits (int8)

≈ 0.51 M MACs, 5.85 k parameters (≈ 10 kB file). Weights are drawn from a seeded generator (He initialization) and
the model is quantized with onnxruntime.quantization.quantize_static — QOperator format, int8
activations, per-channel int8 weights — calibrated on seeded random images, so the file is
reproducible: `python -m tilewise.examples.make_example [OUT]` rewrites it.

Its validation data set (`tilewise validate ... --data/--expected/--labels`, the README's quick
start), `python -m tilewise.examples.make_example --data [DIR]` (default: beside the model):
- example_inputs.npz: 32 structured float32 images, NCHW as the model takes them (key "input"):
  gradients, stripes, checkerboards, discs, flat colours and noisy colour fields, each value a
  multiple of 1/64 in [−1, 1] (so the file compresses to ≈ 10 kB); drawn from a seeded pool of
  candidates and picked so that every class the network predicts at all is represented, as
  evenly as the pool allows (the weights are untrained: the float network only ever predicts a few
  of its 10 classes);
- example_expected.npy: the float network's (float_model, before quantization) logits [32, 10]
  on them, computed by onnxruntime — what the user's framework would give;
- example_labels.npy: int64 [32], the argmax of those logits — so accuracy against the labels is
  the agreement of the quantized C with the float model's decisions.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "example_cnn.onnx"
SEED = 2024
INPUT_SHAPE = (1, 3, 32, 32)


def float_model():
    """The float network (NCHW, opset 17) with seeded weights."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)
    inits: list = []
    nodes: list = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def conv(name: str, x: str, cin: int, cout: int, k: int, stride: int, group: int = 1, relu: bool = True) -> str:
        fan_in = cin // group * k * k
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)
        b = rng.standard_normal(cout) * 0.05
        pad = k // 2
        nodes.append(helper.make_node("Conv", [x, const(f"{name}.weight", w), const(f"{name}.bias", b)], [name],
                                      name=name, kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[pad] * 4, group=group))
        if not relu:
            return name
        nodes.append(helper.make_node("Relu", [name], [f"{name}.relu"], name=f"{name}.relu"))
        return f"{name}.relu"

    x = conv("conv1", "input", 3, 16, 3, 2)
    d = conv("dw2", x, 16, 16, 3, 1, group=16)
    p = conv("pw2", d, 16, 16, 1, 1, relu=False)
    nodes.append(helper.make_node("Add", [x, p], ["res2"], name="res2"))
    nodes.append(helper.make_node("Relu", ["res2"], ["res2.relu"], name="res2.relu"))
    nodes.append(helper.make_node("MaxPool", ["res2.relu"], ["pool2"], name="pool2", kernel_shape=[2, 2],
                                  strides=[2, 2]))
    c3 = conv("conv3", "pool2", 16, 32, 3, 1)
    nodes.append(helper.make_node("GlobalAveragePool", [c3], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    w = rng.standard_normal((10, 32)) * np.sqrt(1.0 / 32)
    nodes.append(helper.make_node("Gemm", ["flat", const("fc.weight", w),
                                           const("fc.bias", rng.standard_normal(10) * 0.05)],
                                  ["logits"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "tilewise_example_cnn",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(INPUT_SHAPE))],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tilewise")
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def build(out: Path = DEFAULT_OUT) -> Path:
    """Write the quantized example model to `out`."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(SEED + 1)
    images = [rng.uniform(-1.0, 1.0, INPUT_SHAPE).astype(np.float32) for _ in range(16)]

    class Images(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(images)

        def get_next(self):
            img = next(self.it, None)
            return None if img is None else {"input": img}

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "float.onnx"
        onnx.save(float_model(), str(src))
        quantize_static(str(src), str(out), Images(), quant_format=QuantFormat.QOperator, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return out


DATA_SEED = 7
DATA_FILES = ("example_inputs.npz", "example_expected.npy", "example_labels.npy")


def _candidate_images(rng: np.random.Generator, n: int) -> np.ndarray:
    """n structured images [n, 3, 32, 32] in [−1, 1], multiples of 1/64 (see the module doc)."""
    h, w = INPUT_SHAPE[2], INPUT_SHAPE[3]
    yy, xx = np.mgrid[0:h, 0:w] / (h - 1)
    out = []
    for i in range(n):
        kind, f, colour = i % 9, int(rng.integers(1, 5)), rng.uniform(-1.0, 1.0, (3, 1, 1))
        if kind == 0:
            base = 2 * xx - 1
        elif kind == 1:
            base = 2 * yy - 1
        elif kind == 2:
            base = np.sign(np.sin(2 * np.pi * f * xx))
        elif kind == 3:
            base = np.sign(np.sin(2 * np.pi * f * yy))
        elif kind == 4:
            base = np.sign(np.sin(2 * np.pi * f * xx) * np.sin(2 * np.pi * f * yy))
        elif kind == 5:
            cy, cx = rng.uniform(0.2, 0.8, 2)
            base = np.where((yy - cy) ** 2 + (xx - cx) ** 2 < rng.uniform(0.1, 0.35) ** 2, 1.0, -1.0)
        elif kind == 6:
            base = np.sin(np.pi * f * (xx + yy))
        elif kind == 7:
            base = np.ones_like(xx)
        else:
            base = 1.0 + rng.normal(0.0, 0.3, (3, h, w))
        out.append(np.round(np.clip(colour * base, -1.0, 1.0) * 64) / 64)
    return np.asarray(out, dtype=np.float32)


def example_data(n: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inputs [n, 3, 32, 32] float32 NCHW, float logits [n, 10] float32, labels [n] int64)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(float_model().SerializeToString(), providers=["CPUExecutionProvider"])
    pool = _candidate_images(np.random.default_rng(DATA_SEED), 40 * n)
    logits = np.concatenate([sess.run(None, {"input": x[None]})[0] for x in pool])
    classes = logits.argmax(axis=1)
    present = sorted(set(classes.tolist()))
    quota = -(-n // len(present))
    picked: list[int] = []
    for c in present:   # up to `quota` per class, in pool order
        picked += [int(i) for i in np.flatnonzero(classes == c)[:quota]]
    taken = set(picked)
    rest = [i for i in range(len(pool)) if i not in taken]
    picked = sorted(picked[:n] if len(picked) >= n else picked + rest[:n - len(picked)])
    return pool[picked], logits[picked].astype(np.float32), classes[picked].astype(np.int64)


def write_data(out_dir: Path = HERE, n: int = 32) -> list[Path]:
    """Write DATA_FILES (inputs, expected float logits, labels) into out_dir."""
    x, y, labels = example_data(n)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f for f in DATA_FILES]
    np.savez_compressed(paths[0], input=x)
    np.save(paths[1], y)
    np.save(paths[2], labels)
    return paths


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--data":
        for p in write_data(Path(sys.argv[2]) if len(sys.argv) > 2 else HERE):
            print(f"wrote {p} ({p.stat().st_size} bytes)")
    else:
        path = build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
        print(f"wrote {path} ({path.stat().st_size} bytes)")
