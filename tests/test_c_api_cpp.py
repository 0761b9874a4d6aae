"""Issue 25 item 5: a C++ application links a generated project through its C API.

The application (tests/c/cpp_app/app.cpp, compiled by g++ with -Wall -Wextra -Werror -pedantic)
includes network.h — extern "C" — and links the project's `make lib` (libnetwork.a, the C
compiled by the project's own -Werror flags). It reads the network from `tw_network_info()`,
prints it, quantizes float inputs with each input's stated scale and zero point, calls
`tw_network_run` with buffers of each tensor's own C type (TW_INPUT_TYPE …: uint8_t, int16_t —
no casts), and writes the codes it fed and got. Checked: the description equals the project's
tilewise.json / the model's quantization, and the outputs equal the golden model's on the
application's own inputs — for the example's float parent quantized in shift mode for gap8
(uint8 in and out, zero points 128 / 131) and for a two-input, four-output int16 and uint8
network. The C application of a uint8 network compiles under -Werror too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from tilewise.cli import main
from tilewise.examples import make_example
from tilewise.examples.make_example import HERE
from tilewise.frontend import load_model
from tilewise.ir.tensor import np_dtype
from tilewise.passes import lower
from tilewise.validate.check import golden_outputs

from .conftest import absent

APP = Path(__file__).parent / "c" / "cpp_app" / "app.cpp"



@pytest.fixture(autouse=True)
def _gxx() -> None:
    if shutil.which("g++") is None:
        absent("g++ is not installed (`make test` installs it)")


def _build_app(project: Path, tmp: Path, extra_inc: tuple[str, ...] = ()) -> Path:
    lib = subprocess.run(["make", "-s", "-C", str(project), "lib"], capture_output=True, text=True)
    assert lib.returncode == 0, lib.stdout + lib.stderr
    exe = tmp / "app"
    cmd = ["g++", "-std=c++11", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic",
           f"-I{project}", *extra_inc, str(APP), str(project / "libnetwork.a"), "-pthread", "-lm",
           "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def _run_app(exe: Path, project: Path, floats: list[np.ndarray], tmp: Path) -> dict:
    """Run the application on N float samples per input (files in the caller's layout)."""
    n = len(floats[0])
    args = [str(exe), str(n), str(tmp / "codes_in.bin"), str(tmp / "codes_out.bin")]
    for k, x in enumerate(floats):
        f = tmp / f"real{k}.f32"
        np.ascontiguousarray(x, np.float32).tofile(f)
        args.append(str(f))
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


def _check_info(info: dict, project: Path) -> dict:
    m = json.loads((project / "tilewise.json").read_text())
    assert info["inputs"] == len(m["inputs"]) and info["outputs"] == len(m["outputs"])
    assert info["target"] == m["target"]
    assert info["l1_bytes"] == m["l1_bytes"] and info["l2_bytes"] == m["l2_arena_bytes"]
    assert info["l3_bytes"] == m["l3_bytes"] and info["l2_image_bytes"] == m["l2_image_bytes"]
    for got, want in zip(info["input"] + info["output"], m["inputs"] + m["outputs"]):
        assert got["name"] == want["name"] and got["dtype"] == want["dtype"]
        assert got["c_type"] == want["c_type"] and got["bytes"] == want["bytes"]
        assert got["dims"] == want["shape"] and got["layout"] == want["layout"]
        assert got["quantized"] == (want["scale"] is not None)
        assert np.float32(got["scale"]) == np.float32(want["scale"] or 0.0)
        assert got["zero_point"] == want["zero_point"]
        assert got["bits"] == np_dtype(want["dtype"]).itemsize * 8
        assert got["is_signed"] == (not want["dtype"].startswith("u"))
    return m


def _quantize(x: np.ndarray, scale: float, zp: int, dtype: str) -> np.ndarray:
    info = np.iinfo(np_dtype(dtype))
    q = np.rint(x.astype(np.float32) / np.float32(scale)).astype(np.int64) + zp
    return np.clip(q, info.min, info.max).astype(np_dtype(dtype))


def _codes(path: Path, specs: list[dict], n: int) -> list[np.ndarray]:
    """The application's code file: per sample, every tensor of `specs` back to back."""
    raw = np.fromfile(path, np.uint8)
    per = sum(s["bytes"] for s in specs)
    assert raw.size == n * per
    raw = raw.reshape(n, per)
    out, at = [], 0
    for s in specs:
        out.append(raw[:, at:at + s["bytes"]].copy().view(np_dtype(s["dtype"]))
                   .reshape(n, *s["shape"]))
        at += s["bytes"]
    return out


def test_a_cpp_application_runs_the_shift_mode_example(tmp_path):
    fm = tmp_path / "float.onnx"
    onnx.save(make_example.float_model(), str(fm))
    q = tmp_path / "q.onnx"
    data = HERE / "example_inputs.npz"
    assert main(["quantize", str(fm), "--calib", str(data), "--target", "gap8", "-o", str(q),
                 "--quiet"]) == 0
    project = tmp_path / "p"
    assert main(["generate", str(q), "--target", "gap8", "-o", str(project), "--quiet"]) == 0
    exe = _build_app(project, tmp_path)
    x = np.load(data)["input"][:8].transpose(0, 2, 3, 1)[:, None]   # NCHW -> the network's NHWC
    info = _run_app(exe, project, [x], tmp_path)
    m = _check_info(info, project)
    stated = {e.key[len("tilewise.quant."):]: e.value.split()
              for e in onnx.load(str(q)).metadata_props}
    assert info["input"][0]["zero_point"] == int(stated["input"][1]) == 128
    assert np.float32(info["output"][0]["scale"]) == np.float32(float(stated["logits"][0]))
    # the application quantized with the stated parameters, and the network computed the model
    (codes_in,) = _codes(tmp_path / "codes_in.bin", m["inputs"], len(x))
    s, z = info["input"][0]["scale"], info["input"][0]["zero_point"]
    assert np.array_equal(codes_in, _quantize(x, s, z, "uint8"))
    lg = lower(load_model(q))
    want = golden_outputs(lg, [(c,) for c in codes_in])
    (codes_out,) = _codes(tmp_path / "codes_out.bin", m["outputs"], len(x))
    assert np.array_equal(codes_out.reshape(len(x), -1),
                          np.stack([np.asarray(w[0]).reshape(-1) for w in want]))


@pytest.mark.parametrize("dtype", ["int16", "uint8"])
def test_a_cpp_application_runs_a_two_input_four_output_network(tmp_path, dtype):
    from .test_multi_io import QUANT, two_io_tflite

    model = two_io_tflite(tmp_path / "two.tflite", dtype)
    project = tmp_path / "p"
    assert main(["generate", str(model), "--target", "stm32h7", "-o", str(project), "--quiet"]) == 0
    h = (project / "network.h").read_text()
    ct = f"{dtype}_t"
    assert (f"int tw_network_run(const {ct} *in0, const {ct} *in1, {ct} *out0, {ct} *out1, "
            f"{ct} *out2, {ct} *out3, void *l1, void *l2);") in h
    exe = _build_app(project, tmp_path)
    rng = np.random.default_rng(3)
    (sx, zx), (sy, zy), _ = QUANT[dtype]
    xs = [rng.uniform(-1, 1, (5, 1, 5, 4, 3)).astype(np.float32) * 60 * s for s in (sx, sy)]
    info = _run_app(exe, project, xs, tmp_path)
    m = _check_info(info, project)
    assert [(np.float32(i["scale"]), i["zero_point"]) for i in info["input"]] == [
        (np.float32(sx), zx), (np.float32(sy), zy)]
    codes_in = _codes(tmp_path / "codes_in.bin", m["inputs"], 5)
    for c, x, (s, z) in zip(codes_in, xs, ((sx, zx), (sy, zy))):
        assert np.array_equal(c, _quantize(x, s, z, dtype))
    lg = lower(load_model(model))
    want = golden_outputs(lg, [tuple(c[i] for c in codes_in) for i in range(5)])
    got = _codes(tmp_path / "codes_out.bin", m["outputs"], 5)
    for k, g in enumerate(got):
        assert np.array_equal(g.reshape(5, -1),
                              np.stack([np.asarray(w[k]).reshape(-1) for w in want])), k


def test_a_c_application_of_a_uint8_network_compiles_under_werror(tmp_path):
    """The same application as C99 against the typed uint8 API (no int8_t* casts)."""
    from .test_multi_io import two_io_tflite

    model = two_io_tflite(tmp_path / "two.tflite", "uint8")
    project = tmp_path / "p"
    assert main(["generate", str(model), "--target", "gap8", "-o", str(project), "--quiet"]) == 0
    app = tmp_path / "app.c"
    app.write_text('#include "network.h"\n'
                   "static TW_INPUT0_TYPE a[TW_INPUT0_ELEMENTS], b[TW_INPUT1_ELEMENTS];\n"
                   "static TW_OUTPUT0_TYPE o0[TW_OUTPUT0_ELEMENTS], o1[TW_OUTPUT1_ELEMENTS], "
                   "o2[TW_OUTPUT2_ELEMENTS], o3[TW_OUTPUT3_ELEMENTS];\n"
                   "static int32_t l1[TW_NETWORK_L1_BYTES / 4 + 1], l2[TW_NETWORK_L2_BYTES / 4 + 1];\n"
                   "int main(void) { return tw_network_run(a, b, o0, o1, o2, o3, l1, l2) "
                   "+ (int)tw_network_info()->inputs - 2; }\n")
    r = subprocess.run(["make", "-s", "-C", str(project), "lib"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{project}", str(app),
                        str(project / "libnetwork.a"), "-pthread", "-lm", "-o",
                        str(tmp_path / "capp")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([str(tmp_path / "capp")]).returncode == 0


def test_the_name_prefix_renames_the_info_api(tmp_path):
    from .test_multi_io import two_io_tflite

    model = two_io_tflite(tmp_path / "two.tflite", "int8")
    project = tmp_path / "p"
    assert main(["generate", str(model), "--target", "gap8", "-o", str(project), "--name", "kws",
                 "--quiet"]) == 0
    h = (project / "network.h").read_text()
    assert "const kws_network_info_t *kws_network_info(void);" in h and "tw_" not in h
    assert '#define KWS_NETWORK_TARGET "gap8"' in h and 'extern "C"' in h
    r = subprocess.run(["make", "-s", "-C", str(project), "lib"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    nm = subprocess.run(["nm", str(project / "libnetwork.a")], capture_output=True, text=True).stdout
    assert " T kws_network_info" in nm and " T kws_network_run" in nm
