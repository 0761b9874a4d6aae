"""Cases of the pulp sub-byte conv (tw_pulp_subbyte.h) for tests/test_pulp_subbyte.py and
bench/pulp_subbyte.py: random packed operands per the sub-byte contract, the expected packed
output from a numpy integer reference, the harness (tests/c/pulp_subbyte_main.c) built for the host
or for pulp-open, and its TW_CASE lines parsed.

The reference is the arithmetic the contract states, on unpacked integers: acc = Σ x·w + bias
over the receptive field (pad taps = the pad value, the input zero point), int64; requantized by
the golden model's apply_requant with the output's clamp ([0, 2^y_bits − 1], int8 for 8 bits: the
project's 8-bit activations); packed (bindings/pulp/subbyte.py `pack`). The kernel sees only
bytes: packed activations, weight rows in the binding's lane order (`weight_bytes`), int32 bias,
the pulp requant words (constants.words_of).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilewise.bindings.pulp import constants, subbyte
from tilewise.codegen.firmware import FIRMWARE_C
from tilewise.golden.requant import apply_requant
from tilewise.ir.requant import Requant, quantize_multiplier
from tilewise.platforms.pulp_open import compile_args, link_args, toolchain

from . import tw_c_build as build

VARIANTS = {"tflite": 0, "shift": 1, "onnx": 2, "tflite_single": 3, "shift32": 4, "tflite_right": 5,
            "onnx24": 6}
MAIN = "pulp_subbyte_main.c"


@dataclass(frozen=True)
class SbCase:
    """One harness case (pulp_subbyte_main.c's tw_case_t): prm, buffers, expected output."""

    name: str
    prm: tuple[int, ...]
    bufs: tuple            # np.ndarray (data) or int (bytes of output / scratch)
    want: np.ndarray       # packed output bytes
    variant: str
    cores: tuple[int, ...]
    macs: int


def conv_acc(x, w, bias, stride, pads, pad_value) -> np.ndarray:
    """int64 accumulators [OY, OX, K] of x [H, W, C] (unsigned ints) and w [K, FY, FX, C]."""
    h, wd, c = x.shape
    k, fy, fx, _ = w.shape
    (sy, sx), (pt, pl, pb, pr) = stride, pads
    xp = np.full((h + pt + pb, wd + pl + pr, c), pad_value, np.int64)
    xp[pt:pt + h, pl:pl + wd] = x
    oy, ox = (h + pt + pb - fy) // sy + 1, (wd + pl + pr - fx) // sx + 1
    acc = np.zeros((oy, ox, k), np.int64) + np.asarray(bias, np.int64)
    wt = w.astype(np.int64)
    for i in range(fy):
        for j in range(fx):
            patch = xp[i:i + sy * (oy - 1) + 1:sy, j:j + sx * (ox - 1) + 1:sx]
            acc += patch @ wt[:, i, j, :].T
    return acc


def _range(bits: int) -> tuple[int, int]:
    """An activation's stored range: u4 / u2, or int8 for 8 bits (tw_pulp_subbyte.h)."""
    return (-128, 127) if bits == 8 else (0, (1 << bits) - 1)


def _requant(mode: str, acc: np.ndarray, y_bits: int, rng) -> tuple[Requant, str]:
    """A requantization of `mode` spreading `acc` over the y_bits output range, and its variant."""
    k = acc.shape[-1]
    lo, hi = _range(y_bits)
    top = hi - lo
    zp = (lo + hi) // 2 + int(rng.integers(-(top // 8), top // 8 + 1))
    spread = acc.reshape(-1, k).std(axis=0) + 1.0
    real = rng.uniform(0.5, 1.5, k) * (top / 4.0) / spread
    if mode == "shift32":
        d = 20
        bound = int(np.abs(acc).max()) + 1
        mult = np.maximum(1, np.round(real * 2.0 ** d)).astype(np.int64)
        mult = np.minimum(mult, (1 << 30) // bound)
        return Requant("shift", mult, np.full(k, d), zp, lo, hi,
                       bias=rng.integers(-(1 << 19), 1 << 19, k)), "shift32"
    m, s = zip(*(quantize_multiplier(float(r)) for r in real))
    rq = Requant("tflite", np.array(m, np.int64), np.array(s, np.int64), zp, lo, hi)
    if mode == "tflite_right":
        assert all(v <= -1 for v in s)
    return rq, mode


def make_case(name: str, rng, h: int, w: int, c: int, k: int, fy: int, fx: int, bits: tuple,
              stride=(1, 1), pads=(0, 0, 0, 0), mode: str = "shift32",
              cores: tuple[int, ...] = (1, 3, 8)) -> SbCase:
    """A conv of x [h, w, c] by [k, fy, fx, c] with (x_bits, w_bits, y_bits) = bits."""
    xb, wb, yb = bits
    assert subbyte.refusal(c, k, fy, fx, xb, wb, yb) is None, name
    x = rng.integers(*_range(xb), (h, w, c), endpoint=True)
    wt = rng.integers(-(1 << (wb - 1)), 1 << (wb - 1), (k, fy, fx, c))
    pad_value = int(rng.integers(*_range(xb), endpoint=True))
    plain = conv_acc(x, wt, np.zeros(k, np.int64), stride, pads, pad_value)
    # a bias centring each channel, so that the outputs spread over the whole output range
    spread = plain.reshape(-1, k).std(axis=0) + 1.0
    bias = (-np.round(plain.reshape(-1, k).mean(axis=0))
            + rng.integers(-4, 5, k) * spread / 16).astype(np.int64)
    acc = plain + bias
    rq, variant = _requant(mode, acc, yb, rng)
    want = subbyte.pack(apply_requant(acc, rq), yb)
    oy, ox = acc.shape[:2]
    words = np.stack(constants.words_of(rq, k, variant), axis=1).ravel().astype(np.int32)
    prm = (h, w, oy, ox, fy, fx, *stride, *pads, c, k, xb, wb, yb, pad_value,
           int(rq.zero_point), int(rq.qmin), int(rq.qmax), 0)
    bufs = (int(want.size), subbyte.scratch_bytes(fy, fx, c, 8), subbyte.pack(x, xb),
            subbyte.weight_bytes(wt, xb, wb), bias.astype(np.int32), words)
    return SbCase(name, prm, bufs, want, variant, cores, oy * ox * k * fy * fx * c)


def int8_case(name: str, rng, h: int, w: int, c: int, k: int, fy: int, fx: int, stride, pads,
              cores: tuple[int, ...]) -> SbCase:
    """The same layer through the int8 kernel tw_pulp_conv2d_s8 (shift32): the 8-bit baseline."""
    x = rng.integers(-128, 128, (h, w, c))
    wt = rng.integers(-128, 128, (k, fy, fx, c))
    bias = rng.integers(-4000, 4000, k)
    acc = conv_acc(x, wt, bias, stride, pads, 0)
    rq, variant = _requant("shift32", acc, 8, rng)
    want = apply_requant(acc, rq).astype(np.int8).view(np.uint8).reshape(-1)
    oy, ox = acc.shape[:2]
    words = np.stack(constants.words_of(rq, k, variant), axis=1).ravel().astype(np.int32)
    l4 = (fy * fx * c + 3) // 4 * 4
    prm = (h, w, oy, ox, fy, fx, *stride, *pads, c, k, 8, 8, 8, 0,
           int(rq.zero_point), int(rq.qmin), int(rq.qmax), 1)
    bufs = (int(want.size), 8 * 2 * l4, x.astype(np.int8).view(np.uint8).reshape(-1),
            wt.astype(np.int8).view(np.uint8).reshape(-1), bias.astype(np.int32), words)
    return SbCase(name, prm, bufs, want, variant, cores, oy * ox * k * fy * fx * c)


def _c_array(name: str, a: np.ndarray) -> str:
    flat = np.asarray(a).reshape(-1)
    if flat.dtype.itemsize == 4:
        ctype, vals = "int32_t", flat.astype(np.int64)
    else:
        ctype, vals = "int8_t", flat.astype(np.uint8).view(np.int8)
    body = ",".join(str(int(v)) for v in vals)
    return (f"static const {ctype} {name}[{max(flat.size, 1)}] __attribute__((aligned(4))) = "
            f"{{{body}}};\n")


def cases_header(cs: list[SbCase]) -> str:
    text = [f"/* generated by tests/pulp_subbyte_cases.py: {len(cs)} cases */\n"]
    rows = []
    for i, c in enumerate(cs):
        bufs = []
        for j, b in enumerate(c.bufs):
            if isinstance(b, (int, np.integer)):
                bufs.append(f"{{NULL, {int(b)}}}")
            else:
                arr = np.asarray(b)
                text.append(_c_array(f"c{i}_b{j}", arr))
                bufs.append(f"{{c{i}_b{j}, {arr.nbytes}}}")
        text.append(_c_array(f"c{i}_want", c.want))
        text.append(f"static const tw_buf_t c{i}_bufs[] = {{{', '.join(bufs)}}};\n")
        prm = ", ".join(str(int(v)) for v in (list(c.prm) + [0] * 24)[:24])
        mask = sum(1 << n for n in c.cores)
        rows.append(f"    {{0, {VARIANTS[c.variant]}, {{{prm}}}, {len(c.bufs)}, c{i}_bufs, 0, "
                    f"c{i}_want, {mask}}},  /* {c.name} */")
    text.append(f"#define TW_CASES {len(cs)}\nstatic const tw_case_t tw_cases[] = {{\n")
    text.append("\n".join(rows) + "\n};\n")
    return "".join(text)


def parse(cs: list[SbCase], text: str) -> dict[tuple[str, int], tuple[int, int]]:
    """{(case name, cores): (mismatching bytes, cycles)} of a harness run's output."""
    assert "TW_DONE" in text, text[-2000:]
    got = {}
    for m in re.finditer(r"TW_CASE (\d+) (\d+) (\d+) (\d+)", text):
        i, cores, bad, cycles = (int(v) for v in m.groups())
        got[(cs[i].name, cores)] = (bad, cycles)
    return got


def run_host(cs: list[SbCase], out: Path) -> dict:
    """The harness built for the host (the kernels' C path, -O2 -Werror) and run."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "cases.h").write_text(cases_header(cs))
    exe = out / "subbyte_host"
    # the pulp kernels the harness calls; those that move data through the HAL (tw_hal.h: the row
    # kernels, the cluster LSTM) are not linked in a host build without a HAL
    pulp = [p for p in build.pulp_sources() if '#include "tw_hal.h"' not in p.read_text()]
    srcs = [build.TESTS_C / MAIN, *build.kernel_sources(), *pulp]
    build.run_cc([*build.CFLAGS, "-O2", "-DTW_SB_HOST", f"-I{out}", f"-I{build.KERNELS}",
                  f"-I{build.PULP}", *map(str, srcs), "-o", str(exe), "-lm"])
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    return parse(cs, proc.stdout)


def build_firmware(cs: list[SbCase], out: Path, defines: tuple[str, ...] = ()) -> Path:
    """The harness as pulp-open firmware (the XpulpV2 path): crt0, tw_fw.c, the fork HAL;
    `defines` e.g. ("TW_PULP_SB_EXTRACT",) for PULP-NN's unpacking (tw_pulp_subbyte.c)."""
    tc = toolchain()
    out.mkdir(parents=True, exist_ok=True)
    (out / "cases.h").write_text(cases_header(cs))
    fw = FIRMWARE_C / "pulp_open"
    hal = build.C_ROOT / "tw_hal"
    srcs = [fw / "crt0.S", fw / "tw_fw.c", hal / "tw_hal_pulp_open.c", build.TESTS_C / MAIN,
            *build.kernel_sources(), *build.pulp_sources()]
    objects = []
    for s in srcs:
        obj = out / f"{s.parent.name}_{s.name}.o"
        args = compile_args(tc, [out, fw, hal, build.KERNELS, build.PULP], s, obj)
        build.compile_object([args[0], *(f"-D{d}" for d in defines), *args[1:]], s, obj)
        objects.append(obj)
    elf = out / "subbyte.elf"
    build.run_cmd(link_args(tc, fw / "link.ld", objects, elf))
    return elf
