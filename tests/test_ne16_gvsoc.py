"""The cluster's share of an NE16 layer on GVSoC's pulp-open cluster: the requantization of the
job's int32 outputs (bindings/ne16/c/tw_ne16_kernels.c tw_ne16_requant_s8_<variant>) and the u8
conversion of the input tile (tw_ne16_to_u8), bit-exact against the golden model, and their cost
model (bindings/ne16/cost.py `requant`, `convert`) against the cycles GVSoC measures.

GVSoC has no NE16, so the firmware (tests/c/ne16_gvsoc_main.c) gives the kernels the int32
accumulators a job would write. Correctness cases (odd channel counts, fewer outputs than cores,
every variant) run on 1, 3 and 8 cores; the timed cases are the tiles of the MLPerf Tiny layers
gap9 puts on NE16 (kws_dscnn 25×5×64; ic_resnet8 32×16×16, 16×16×32, 8×8×64; vww 21×48×8,
12×12×64, 6×6×128 in the general tflite variant, 3×3×256), each in the pulp variant and in the
one-mulh form of the *_mulh bindings (tw_ne16_requant_s8_mulh), on 1 and 8 cores, an empty fork
subtracted, with those layers' output clamp [-128, 127]; the one-mulh form's other clamps (ReLU's
[zp, 127], a u8 output's [0, 255]) and its constant channels in the correctness cases.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tilewise.bindings.base import BindingKey
from tilewise.bindings.ne16 import __file__ as NE16_INIT
from tilewise.bindings.ne16.cost import Ne16Kernels
from tilewise.bindings.ne16.requant import mulh_fits_rq, mulh_words_of
from tilewise.platforms.gvsoc import execute as run_firmware
from tilewise.validate.firmware_run import parse

from .test_c_kernels import requantized
from .test_gvsoc import gvsoc_present  # noqa: F401 (autouse fixture: skip without GVSoC)
from .test_pulp_gvsoc import _c_array, _variant_rq, _words, build_firmware

NE16_C = Path(NE16_INIT).parent / "c"
PULP_REQUANT_H = NE16_C.parent.parent / "pulp" / "c" / "tw_pulp_requant.h"


def _pulp_variants() -> tuple[str, ...]:
    """The pulp requant variants in TW_PULP_VARIANTS' order, read from the header (the table in
    ne16_gvsoc_main.c is built from that X-macro: a variant added there shifts every index)."""
    text = PULP_REQUANT_H.read_text()
    block = text[text.index("#define TW_PULP_VARIANTS(X)"):]
    block = block[:block.index("\n\n")]
    return tuple(re.findall(r"X\((\w+),", block))


#: the kernels' table order in ne16_gvsoc_main.c: the pulp variants (header order), then the
#: one-mulh forms of tflite and tflite_right (tw_ne16_kernels.h)
VARIANTS = _pulp_variants() + ("mulh_tflite", "mulh_tflite_right")
KINDS = ("requant", "to_u8", "nop")
#: prediction / measurement allowed per timed case on 8 cores (the pulp kernels' per-kind ±20%)
TOLERANCE = 0.20


def requant_case(name, rng, n, k, variant, cores=(1, 3, 8), clamp: str | None = None):
    """n pixels × k channels of int32 accumulators and bias (their sum the layer's accumulator,
    a few 10^5 as in the MLPerf Tiny layers), requantized in `variant`; `clamp` "int8": [-128,
    127] (every MLPerf Tiny NE16 layer's), "relu": [zp, 127], "u8": the output stored as u8 (zero
    point + 128, clamp [0, 255], as a u8 hand-off writes it); None: make_requant's choice (the
    one-mulh kernel clamps with p.clip, p.clipu or p.max / p.min by the range)."""
    acc = rng.integers(-300_000, 300_000, (n, k)).astype(np.int32)
    bias = rng.integers(-50_000, 50_000, k).astype(np.int32)
    total = acc.astype(np.int64) + bias
    base = variant.removeprefix("mulh_")
    bound = np.full(k, 400_000, np.int64)
    rq, v = _variant_rq(base, total, rng, bound)
    assert v == base, (v, variant)
    zp = int(rq.zero_point)
    lo_hi = {"int8": (zp, -128, 127), "relu": (zp, zp, 127), "u8": (zp + 128, 0, 255)}
    if clamp is not None:
        z, lo, hi = lo_hi[clamp]
        rq = replace(rq, zero_point=z, qmin=lo, qmax=hi)
    if variant != base:        # the one-mulh form: exact for these accumulators (requant.py)
        assert mulh_fits_rq(rq, bound), variant
    want = requantized(total, rq)
    words = (_words(rq, k, base) if variant == base else
             np.stack(mulh_words_of(rq, k), axis=1).ravel().astype(np.int32))
    return dict(name=name, kind="requant", variant=variant, n=n, k=k,
                rq=(int(rq.zero_point), int(rq.qmin), int(rq.qmax)),
                bufs=[want.nbytes, acc, bias, words], want=want, cores=cores)


def constant_case(name, rng, n, k, cores=(1, 3, 8)):
    """The one-mulh form with "dead" channels, as TFLite files hold them (vww): channel 1 with a
    bias of 2^30 and a multiplier of 2^−26, whose output is one code (zp + 16) for every
    accumulator, channel 4 with a right shift of 31 (the code zp), which the one-mulh bound does
    not take: their words write the constant (requant.py `constant_channels`)."""
    acc = rng.integers(-300_000, 300_000, (n, k)).astype(np.int32)
    bias = rng.integers(-50_000, 50_000, k).astype(np.int32)
    bias[1] = 1 << 30
    total = acc.astype(np.int64) + bias
    rq, _ = _variant_rq("tflite_right", total, rng, np.full(k, 400_000, np.int64))
    m0, shift = np.array(rq.multiplier, np.int64), np.array(rq.shift, np.int64)
    m0[1], shift[1], shift[4] = 1 << 30, -25, -31
    rq = replace(rq, multiplier=m0, shift=shift)
    want = requantized(total, rq)
    const = np.ma.masked_array(np.zeros(k, np.int64), mask=np.ones(k, bool))
    for ch in (1, 4):
        assert (want[:, ch] == want[0, ch]).all(), ch
        const[ch] = int(want[0, ch])
    assert const[1] == rq.zero_point + 16 and const[4] == rq.zero_point
    words = np.stack(mulh_words_of(rq, k, const), axis=1).ravel().astype(np.int32)
    return dict(name=name, kind="requant", variant="mulh_tflite_right", n=n, k=k,
                rq=(int(rq.zero_point), int(rq.qmin), int(rq.qmax)),
                bufs=[want.nbytes, acc, bias, words], want=want, cores=cores)


def to_u8_case(name, rng, n, cores=(1, 8)):
    x = rng.integers(-128, 128, n).astype(np.int8)
    want = (x.view(np.uint8) ^ 0x80).view(np.int8)
    return dict(name=name, kind="to_u8", variant="tflite", n=n, k=0, rq=(0, 0, 0),
                bufs=[n, x], want=want, cores=cores)


#: the timed requantizations: (name, pixels, channels, variant)
PERF = [("kws_25x5x64", 125, 64, "tflite_right"),
        ("resnet8_32x16x16", 512, 16, "tflite_right"),
        ("resnet8_16x16x32", 256, 32, "tflite_right"),
        ("resnet8_8x8x64", 64, 64, "tflite_right"),
        ("vww_21x48x8", 1008, 8, "tflite_right"),
        ("vww_12x12x64", 144, 64, "tflite_right"),
        ("vww_6x6x128_tflite", 36, 128, "tflite"),
        ("vww_3x3x256", 9, 256, "tflite_right"),
        ("kws_25x5x64_mulh", 125, 64, "mulh_tflite_right"),
        ("resnet8_32x16x16_mulh", 512, 16, "mulh_tflite_right"),
        ("resnet8_16x16x32_mulh", 256, 32, "mulh_tflite_right"),
        ("resnet8_8x8x64_mulh", 64, 64, "mulh_tflite_right"),
        ("vww_21x48x8_mulh", 1008, 8, "mulh_tflite_right"),
        ("vww_12x12x64_mulh", 144, 64, "mulh_tflite_right"),
        ("vww_6x6x128_mulh_tflite", 36, 128, "mulh_tflite"),
        ("vww_3x3x256_mulh", 9, 256, "mulh_tflite_right")]
#: the timed conversions: input bytes of kws_dscnn's (25×5×64) and ic_resnet8's (18×18×16) tiles
PERF_U8 = [("u8_kws_8000", 8000), ("u8_resnet8_5184", 5184)]


def cases() -> list[dict]:
    rng = np.random.default_rng(16)
    out = [requant_case(f"rq_7x5_{v}", rng, 7, 5, v) for v in VARIANTS]
    out += [requant_case("rq_13x24_tflite_right", rng, 13, 24, "tflite_right"),
            requant_case("rq_13x24_mulh_tflite_right", rng, 13, 24, "mulh_tflite_right"),
            requant_case("rq_3x2_mulh_tflite", rng, 3, 2, "mulh_tflite"),
            requant_case("rq_10x36_mulh_tflite", rng, 10, 36, "mulh_tflite"),
            requant_case("rq_3x2_tflite", rng, 3, 2, "tflite"),
            requant_case("rq_10x36_tflite", rng, 10, 36, "tflite"),
            constant_case("rq_11x6_mulh_constant", rng, 11, 6),
            requant_case("rq_9x10_mulh_u8", rng, 9, 10, "mulh_tflite_right", clamp="u8"),
            requant_case("rq_9x10_mulh_tflite_u8", rng, 9, 10, "mulh_tflite", clamp="u8"),
            requant_case("rq_9x10_mulh_relu", rng, 9, 10, "mulh_tflite_right", clamp="relu"),
            to_u8_case("u8_1003", rng, 1003, cores=(1, 3, 8))]
    out += [requant_case(n, rng, p, k, v, cores=(1, 8), clamp="int8") for n, p, k, v in PERF]
    out += [to_u8_case(n, rng, b) for n, b in PERF_U8]
    out.append(dict(name="fork", kind="nop", variant="tflite", n=0, k=0, rq=(0, 0, 0), bufs=[4],
                    want=np.full(4, 0x5A, np.int8), cores=(1, 8)))
    return out


def cases_header(cs: list[dict]) -> str:
    text = [f"/* generated by tests/test_ne16_gvsoc.py: {len(cs)} cases */\n"]
    rows = []
    for i, c in enumerate(cs):
        bufs = []
        for j, b in enumerate(c["bufs"]):
            if isinstance(b, (int, np.integer)):
                bufs.append(f"{{NULL, {int(b)}}}")
            else:
                arr = np.asarray(b)
                arr = arr.astype(np.int32) if arr.dtype.itemsize == 4 else arr.astype(np.int8)
                text.append(_c_array(f"c{i}_b{j}", arr))
                bufs.append(f"{{c{i}_b{j}, {arr.nbytes}}}")
        text.append(_c_array(f"c{i}_want", np.asarray(c["want"]).astype(np.int8)))
        text.append(f"static const tw_buf_t c{i}_bufs[] = {{{', '.join(bufs)}}};\n")
        mask = sum(1 << n for n in c["cores"])
        zp, lo, hi = c["rq"]
        rows.append(f"    {{{KINDS.index(c['kind'])}, {VARIANTS.index(c['variant'])}, {c['n']}, "
                    f"{c['k']}, {zp}, {lo}, {hi}, c{i}_bufs, {len(bufs)}, c{i}_want, {mask}}},"
                    f"  /* {c['name']} */")
    text.append(f"#define TW_CASES {len(cs)}\nstatic const tw_case_t tw_cases[] = {{\n")
    text.append("\n".join(rows) + "\n};\n")
    return "".join(text)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cs = cases()
    elf = build_firmware([], tmp_path_factory.mktemp("ne16_gvsoc"), main="ne16_gvsoc_main.c",
                         header=cases_header(cs), family=NE16_C)
    run = parse(run_firmware(elf, timeout=600))
    assert run.status == 0 and "TW_DONE" in run.text, run.text[-2000:]
    got = {}
    for m in re.finditer(r"TW_CASE (\d+) (\d+) (\d+) (\d+)", run.text):
        i, cores, bad, cycles = (int(v) for v in m.groups())
        got[(cs[i]["name"], cores)] = (bad, cycles)
    return cs, got


def test_ne16_cluster_kernels_bit_exact_on_gvsoc(results):
    cs, got = results
    assert set(got) == {(c["name"], n) for c in cs for n in c["cores"]}
    bad = {k: v[0] for k, v in got.items() if v[0]}
    assert not bad, bad
    assert {c["variant"] for c in cs if c["kind"] == "requant"} == set(VARIANTS)


def measured(got, name: str, cores: int) -> float:
    """Cycles of a case's fork on `cores` cores beyond the empty fork's."""
    return got[(name, cores)][1] - got[("fork", cores)][1]


def _key(variant: str) -> BindingKey:
    mode = {"tflite_right": "tflite", "tflite_single": "tflite", "shift32": "shift"}.get(variant,
                                                                                         variant)
    return BindingKey("conv2d", mode, None, "conv")


def test_cost_model_holds_against_gvsoc(results):
    """bindings/ne16/cost.py prices the timed tiles' requantization (requant / 8 per output and
    the 8 cores' split) and conversion (`convert` / 8 per byte) within ±20% of GVSoC."""
    _, got = results
    model = Ne16Kernels()
    mulh = replace(model, requant_tflite=model.requant_mulh)      # the *_mulh bindings' model
    ratios = {}
    for name, n, k, variant in PERF:
        base = variant.removeprefix("mulh_")
        m = (mulh if base != variant else model).for_key(_key(base))
        ratios[name] = m.requant * -(-n * k // 8) / measured(got, name, 8)
    for name, b in PERF_U8:
        ratios[name] = model.convert * -(-b // 8) / measured(got, name, 8)
    off = {k: round(v, 3) for k, v in ratios.items() if abs(v - 1) > TOLERANCE}
    assert not off, off


def test_report_cycles(results, capsys):
    """Not an assertion on speed: prints the per-output figures (bench reads the same)."""
    _, got = results
    with capsys.disabled():
        for name, n, k, variant in PERF:
            print(f"{name:22s} {variant:13s} 1 core {measured(got, name, 1) / (n * k):6.2f} "
                  f"8 cores {8 * measured(got, name, 8) / (n * k):6.2f} cycles/output·core")
        for name, b in PERF_U8:
            print(f"{name:22s} 1 core {measured(got, name, 1) / b:6.3f} "
                  f"8 cores {8 * measured(got, name, 8) / b:6.3f} cycles/byte·core")
