"""A small float CNN trained on scikit-learn's digits (real labelled 8×8 images), written as float ONNX.

Data: ``sklearn.datasets.load_digits`` (1,797 images, 16 grey levels), scaled to [0, 1], NCHW
1×1×8×8; a seeded split into training and evaluation sets.

Network (NCHW, opset 17): conv 3×3/1 pad 1, 1→8, ReLU -> conv 3×3/2 pad 1, 8→16, ReLU (4×4) ->
Flatten -> Gemm 256→10 (logits). ≈ 4.6 k MACs... small enough that the trainer below, numpy
only (convolution as im2col + one matrix product, softmax cross-entropy, SGD with momentum), trains
it in a few seconds on one core to ≈ 97 % on the held-out set. Why numpy and not a framework: no
training framework is a dependency of tilewise, and the network must contain convolutions (the
layers quantize.py's per-channel weights and the kernels are about), which sklearn's MLP lacks.
Everything is seeded, so a run is reproducible on one machine (BLAS summation order may change the
last bits across machines; tests use accuracy bounds, not exact weights).

Dev-only (bench/quantize_subbyte.py, bench/quantize_shift.py, tests/conftest.py): not part of the
shipped tilewise package.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SEED = 15
CONVS = ((1, 8, 1), (8, 16, 2))     # (cin, cout, stride), 3×3 kernels, pad 1


@dataclass(frozen=True, eq=False)
class Digits:
    x_train: np.ndarray   # [N, 1, 8, 8] float32 in [0, 1]
    y_train: np.ndarray   # [N] int64
    x_eval: np.ndarray
    y_eval: np.ndarray


def load(n_eval: int = 400, seed: int = SEED) -> Digits:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    ev, tr = order[:n_eval], order[n_eval:]
    return Digits(x[tr], y[tr], x[ev], y[ev])


def _im2col(x: np.ndarray, stride: int) -> tuple[np.ndarray, int, int]:
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (h - 1) // stride + 1, (w - 1) // stride + 1
    cols = np.empty((n, oh, ow, c, 3, 3), dtype=x.dtype)
    for i in range(3):
        for j in range(3):
            cols[..., i, j] = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride].transpose(0, 2, 3, 1)
    return cols.reshape(n * oh * ow, c * 9), oh, ow


def _col2im(dcols: np.ndarray, shape: tuple[int, ...], stride: int, oh: int, ow: int) -> np.ndarray:
    n, c, h, w = shape
    d = dcols.reshape(n, oh, ow, c, 3, 3)
    dxp = np.zeros((n, c, h + 2, w + 2), dtype=dcols.dtype)
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride] += d[..., i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1]


class Cnn:
    """Parameters in ONNX layout: conv weights [cout, cin, 3, 3], fc weight [10, 256] (transB)."""

    def __init__(self, seed: int = SEED) -> None:
        rng = np.random.default_rng(seed)
        self.convs = [(rng.standard_normal((co, ci, 3, 3)) * np.sqrt(2.0 / (ci * 9)), np.zeros(co), s)
                      for ci, co, s in CONVS]
        self.fc_w = rng.standard_normal((10, 256)) * np.sqrt(1.0 / 256)
        self.fc_b = np.zeros(10)

    def forward(self, x: np.ndarray, keep: bool = False):
        cache = []
        a = x.astype(np.float64)
        for w, b, s in self.convs:
            cols, oh, ow = _im2col(a, s)
            z = cols @ w.reshape(w.shape[0], -1).T + b
            out = np.maximum(z, 0.0).reshape(a.shape[0], oh, ow, -1).transpose(0, 3, 1, 2)
            cache.append((a.shape, cols, z, oh, ow))
            a = out
        flat = a.reshape(a.shape[0], -1)
        logits = flat @ self.fc_w.T + self.fc_b
        return (logits, cache, flat) if keep else logits

    def step(self, x: np.ndarray, y: np.ndarray, lr: float, vel: list) -> float:
        logits, cache, flat = self.forward(x, keep=True)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.mean(np.log(p[np.arange(len(y)), y] + 1e-12)))
        g = p
        g[np.arange(len(y)), y] -= 1.0
        g /= len(y)
        grads = [g.T @ flat, g.sum(axis=0)]
        da = (g @ self.fc_w).reshape(len(y), CONVS[-1][1], *cache[-1][3:5])
        conv_grads = []
        for (w, b, s), (shape, cols, z, oh, ow) in zip(reversed(self.convs), reversed(cache)):
            dz = da.transpose(0, 2, 3, 1).reshape(-1, w.shape[0]) * (z > 0)
            conv_grads.append((dz.T @ cols).reshape(w.shape))
            conv_grads.append(dz.sum(axis=0))
            da = _col2im(dz @ w.reshape(w.shape[0], -1), shape, s, oh, ow)
        params = [self.fc_w, self.fc_b] + [t for w, b, _ in reversed(self.convs) for t in (w, b)]
        for prm, grd, v in zip(params, grads + conv_grads, vel):
            v *= 0.9
            v -= lr * grd
            prm += v
        return loss

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.forward(x).argmax(axis=1) == y))


def train(data: Digits, epochs: int = 12, batch: int = 32, lr: float = 0.05, seed: int = SEED) -> Cnn:
    net = Cnn(seed)
    vel = [np.zeros_like(t) for t in [net.fc_w, net.fc_b] + [t for w, b, _ in reversed(net.convs) for t in (w, b)]]
    rng = np.random.default_rng(seed + 1)
    for _ in range(epochs):
        order = rng.permutation(len(data.y_train))
        for k in range(0, len(order), batch):
            idx = order[k:k + batch]
            net.step(data.x_train[idx], data.y_train[idx], lr, vel)
    return net


def to_onnx(net: Cnn):
    """The float ONNX model of `net` (input "input" 1×1×8×8, output "logits" 1×10)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes, x = [], [], "input"
    for k, (w, b, s) in enumerate(net.convs):
        inits += [numpy_helper.from_array(w.astype(np.float32), f"conv{k}.weight"),
                  numpy_helper.from_array(b.astype(np.float32), f"conv{k}.bias")]
        nodes.append(helper.make_node("Conv", [x, f"conv{k}.weight", f"conv{k}.bias"], [f"conv{k}"],
                                      name=f"conv{k}", kernel_shape=[3, 3], strides=[s, s], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"conv{k}"], [f"conv{k}.relu"], name=f"conv{k}.relu"))
        x = f"conv{k}.relu"
    nodes.append(helper.make_node("Flatten", [x], ["flat"], name="flatten", axis=1))
    inits += [numpy_helper.from_array(net.fc_w.astype(np.float32), "fc.weight"),
              numpy_helper.from_array(net.fc_b.astype(np.float32), "fc.bias")]
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "digits_cnn",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tilewise digits")
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model
