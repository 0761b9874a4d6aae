"""onnxruntime's float requantization in integers (tilewise/golden/onnx_requant_exact.py and
tilewise/bindings/portable/c/tw_onnx_requant_exact.h) equals numpy's float32 rint(fl(fl(acc)·s))
bit for bit: the edge classes of bench/onnx_requant_identity.py on ~10 M pairs per run, every tie
k + 1/2, the constants, and the C header compiled with the host gcc on ~2 M pairs (tw_onnx_rq_round
and its one-word form tw_onnx_rq_round_hi). The bench runs
the same classes on 300 M pairs (bench/onnx_requant_identity.json)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from bench import onnx_requant_identity as ident
from tests.conftest import absent
from tilewise.golden.onnx_requant_exact import EXACT_BOUND, constants, requantize, round_product

HEADER_DIR = ident.Path(__file__).resolve().parent.parent / "tilewise" / "bindings" / "portable" / "c"


@pytest.fixture(scope="module")
def edge_table():
    return ident.band_edge_table(fine=2)


def test_edge_classes_have_no_difference(edge_table):
    rng = np.random.default_rng(2027)
    with np.errstate(over="ignore"):
        rows = ident.check_chunk(rng, 1_400_000, edge_table)
    assert len(rows) == len(ident.CLASSES) and sum(r["pairs"] for r in rows.values()) >= 9_000_000
    for name, r in rows.items():
        assert (r["differences"], r["int8_uint8_differences"], r["float32_vs_double_route"]) == (0, 0, 0), name
    # the classes reach what they are named for: where rounding the exact product once would be wrong,
    # float32 ties of the product on the band edge, ties k + 1/2, float32-rounded accumulators
    dr = "double rounding changes the result"
    assert all(rows[c][dr] > 1000 for c in ("band around k + 1/2 (scale steps)",
                                            "band around k + 1/2 (acc steps, small scales)",
                                            "band edges, exact product ties and just inside/outside"))
    assert rows["band edges, exact product ties and just inside/outside"][
        "product tie on the band edge (|X - (k+1/2)| = half ulp)"] > 100_000
    assert rows["exact ties k + 1/2"]["tie (X = k + 1/2 exactly)"] == 1_400_000
    assert rows["|acc| near 2^24, 2^31 - 1, -2^31, acc rounding ties"][
        "acc rounded by float32 (|acc| > 2^24)"] > 500_000


def test_every_tie_k_plus_half():
    """X = ±(k + 1/2) for every k in [0, 600), as (2k+1)·2^(z−1) · 2^-z and 2^(z−1) · (2k+1)·2^-z."""
    k = np.arange(ident.KMAX, dtype=np.int64)
    z = np.arange(1, 21, dtype=np.int64)
    K, Z = (x.ravel() for x in np.meshgrid(k, z))
    acc = np.concatenate([(2 * K + 1) << (Z - 1), np.int64(1) << (Z - 1)])
    s = np.concatenate([np.exp2(-Z.astype(np.float64)), (2 * K + 1) * np.exp2(-Z.astype(np.float64))])
    acc, s = np.concatenate([acc, -acc]).astype(np.int32), np.concatenate([s, s]).astype(np.float32)
    ref = ident.float_reference(acc, s)
    assert set(np.abs(ref)) == set(2 * ((k + 1) // 2))            # half to even: 0, 2, 2, 4, 4, ...
    assert np.array_equal(ident.integer_result(acc, s), ref)


def test_constants():
    m, r = constants(np.array([1.0, 0.75, 2.0**-32, np.nextafter(np.float32(2.0**-32), np.float32(0)),
                               0.0, -0.0, 1e-45, 2.0**22, 1e30, 3.4e38], dtype=np.float32))
    assert list(m) == [1 << 30, 3 << 29, 1 << 30, 0, 0, 0, 0, 1 << 30, 1 << 30, 1 << 30]
    assert list(r) == [30, 31, 62, 8, 8, 8, 8, 8, 8, 8]
    for bad in (-1e-3, np.inf, -np.inf, np.nan):
        with pytest.raises(ValueError):
            constants(np.float32(bad))


def test_requantize_per_channel_and_its_range():
    acc = np.array([[1000, -1000, 7], [2**31 - 1, -2**31, 0]], dtype=np.int32)
    scale = np.array([0.0125, 1e-9, 3.0], dtype=np.float32)
    zp = np.array([-3, 100, 0])
    want = np.clip(ident.float_reference(acc, np.broadcast_to(scale, acc.shape)) + zp, -128, 127)
    assert np.array_equal(requantize(acc, scale, zp, -128, 127), want)
    assert list(requantize(np.array([5, -5]), np.float32(0.5), 0, -128, 127)) == [2, -2]   # 2.5 → 2
    with pytest.raises(ValueError):
        requantize(acc, scale, 0, -(1 << 23), 127)


def test_large_products_keep_their_sign():
    """Beyond ±2^22 the integer form is not rint but has the sign and a magnitude ≥ 2^22."""
    rng = np.random.default_rng(5)
    acc = rng.integers(-2**31, 2**31, 200_000).astype(np.int32)
    s = ident._log_uniform(rng, 1e-3, 1e30, 200_000)
    m, r = constants(s)
    y = round_product(acc, m, r)
    with np.errstate(over="ignore"):
        f = acc.astype(np.float32) * s
    big = np.abs(f) >= EXACT_BOUND
    assert big.sum() > 100_000
    assert np.all(np.sign(y[big]) == np.sign(f[big])) and np.all(np.abs(y[big]) >= EXACT_BOUND)


C_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "tw_onnx_requant_exact.h"

int main(int argc, char **argv)
{
    if (argc != 4)
        return 1;
    long n = atol(argv[1]);
    FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
    int32_t *acc = malloc(n * 4), *zp = malloc(n * 4), *lo = malloc(n * 4), *hi = malloc(n * 4);
    uint32_t *bits = malloc(n * 4);
    if (!in || !out || fread(acc, 4, n, in) != (size_t)n || fread(bits, 4, n, in) != (size_t)n
        || fread(zp, 4, n, in) != (size_t)n || fread(lo, 4, n, in) != (size_t)n || fread(hi, 4, n, in) != (size_t)n)
        return 2;
    for (long i = 0; i < n; i++) {
        tw_onnx_rq_t c;
        if (tw_onnx_rq_init(&c, bits[i]))
            return 3;
        int64_t y = tw_onnx_rq_round(acc[i], c.mult, c.shift);
        int32_t q = tw_onnx_rq(acc[i], &c, zp[i], lo[i], hi[i]);
        int32_t y_hi = c.shift >= 33 ? tw_onnx_rq_round_hi(acc[i], c.mult, c.shift) : 0;
        fwrite(&c.mult, 4, 1, out);
        fwrite(&c.shift, 4, 1, out);
        fwrite(&y, 8, 1, out);
        fwrite(&q, 4, 1, out);
        fwrite(&y_hi, 4, 1, out);
    }
    return fclose(out) != 0;
}
"""


def test_c_header_matches_numpy_float32(tmp_path, edge_table):
    gcc = shutil.which("gcc")
    if gcc is None:
        absent("the host gcc is needed to compile tw_onnx_requant_exact.h")
    src, exe = tmp_path / "rq.c", tmp_path / "rq"
    src.write_text(C_MAIN)
    subprocess.run([gcc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(HEADER_DIR), str(src),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    rng = np.random.default_rng(11)
    pairs = []
    for name, gen in ident.CLASSES.items():
        pairs.append(gen(rng, 300_000, edge_table) if gen is ident.band_edges else gen(rng, 300_000))
    acc = np.concatenate([a for a, _ in pairs]).astype(np.int32)
    s = np.concatenate([b for _, b in pairs]).astype(np.float32)
    n = len(acc)
    u8 = rng.integers(0, 2, n) == 1
    zp = np.where(u8, rng.integers(0, 256, n), rng.integers(-128, 128, n)).astype(np.int32)
    lo, hi = np.where(u8, 0, -128).astype(np.int32), np.where(u8, 255, 127).astype(np.int32)
    (tmp_path / "in.bin").write_bytes(b"".join(x.tobytes() for x in (acc, s.view(np.uint32), zp, lo, hi)))
    run = subprocess.run([str(exe), str(n), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run
    out = np.fromfile(tmp_path / "out.bin",
                      dtype=np.dtype([("m", "<i4"), ("r", "<i4"), ("y", "<i8"), ("q", "<i4"), ("y_hi", "<i4")]))
    m, r = constants(s)
    assert np.array_equal(out["m"], m) and np.array_equal(out["r"], r)
    with np.errstate(over="ignore"):
        ref = ident.float_reference(acc, s)
    assert np.array_equal(np.clip(out["y"], -EXACT_BOUND, EXACT_BOUND), ref)
    assert np.array_equal(out["q"], np.clip(ref + zp, lo, hi))
    word = r >= 33                                                    # tw_onnx_rq_round_hi: scales < 1/4
    assert word.sum() > 1_000_000 and np.array_equal(np.clip(out["y_hi"][word], -EXACT_BOUND, EXACT_BOUND), ref[word])
