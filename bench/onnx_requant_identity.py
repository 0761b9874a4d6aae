"""The requantization identity of issue 27 on hundreds of millions of (acc, scale) pairs.

tilewise/golden/onnx_requant_exact.py computes onnxruntime's rint(fl(fl(acc)·scale)) in integers;
this script compares it with numpy's float32 computation on pairs drawn from edge classes
(`CLASSES`), in chunks, and writes bench/onnx_requant_identity.json: pairs and differences per
class, and how many pairs hit each boundary (`hits`: exact ties, products rounded onto a tie by
the float32 product — where rounding the exact product once would differ —, product ties on the
band edge, accumulators that float32 rounds, int8-saturated results). Every difference must be 0.

    python bench/onnx_requant_identity.py [--pairs 300e6] [--chunk 2e6] [--seed 27]

tests/test_onnx_requant_exact.py runs the same classes on a few million pairs.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from tilewise.golden.onnx_requant_exact import EXACT_BOUND, constants, float32_of_int, msb64, round_product

OUT = Path(__file__).resolve().parent / "onnx_requant_identity.json"
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
KMAX = 600          # ties k + 1/2 for k in [−KMAX, KMAX): every int8/uint8 result and beyond


# --- references ------------------------------------------------------------------------------------

def float_reference(acc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """rint(fl(fl(acc)·scale)) by numpy float32, clamped to ±2^22 in float (int64)."""
    a = np.asarray(acc, dtype=np.int32).astype(np.float32)
    f = a * np.asarray(scale, dtype=np.float32)
    return np.rint(np.clip(f, -float(EXACT_BOUND), float(EXACT_BOUND))).astype(np.int64)


def double_reference(acc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The same by another route: fl(acc) from the exact double, the product exact in double (24 × 24
    significant bits), one rounding to float32."""
    a = np.asarray(acc, dtype=np.int64).astype(np.float64).astype(np.float32).astype(np.float64)
    f = (a * np.asarray(scale, dtype=np.float32).astype(np.float64)).astype(np.float32)
    return np.rint(np.clip(f, -float(EXACT_BOUND), float(EXACT_BOUND))).astype(np.int64)


def integer_result(acc: np.ndarray, scale: np.ndarray) -> np.ndarray:
    m, r = constants(scale)
    return np.clip(round_product(acc, m, r), -EXACT_BOUND, EXACT_BOUND)


def hits(acc: np.ndarray, scale: np.ndarray) -> dict[str, int]:
    """Boundary cases among the pairs, from the exact product X = fl(acc)·scale = p / 2^r."""
    m, r = constants(scale)
    a = float32_of_int(acc)
    p = a * m
    F = p & ((np.int64(1) << r) - 1)
    H = np.int64(1) << (r - 1)
    h = msb64(np.abs(p)) >> 24
    n = p >> r
    small = (np.abs(n) < EXACT_BOUND) & (m != 0)
    single = n + ((F > H) | ((F == H) & ((n & 1) == 1)))            # rint(X), one rounding
    ref = float_reference(acc, scale)
    return {
        "tie (X = k + 1/2 exactly)": int(np.sum(small & (F == H))),
        "product rounded onto k + 1/2 (0 < |X - (k+1/2)| <= half ulp)":
            int(np.sum(small & (F != H) & (np.abs(F - H) <= h))),
        "double rounding changes the result": int(np.sum(small & (single != ref))),
        "product tie on the band edge (|X - (k+1/2)| = half ulp)": int(np.sum(small & (h > 0) & (np.abs(F - H) == h))),
        "acc rounded by float32 (|acc| > 2^24)": int(np.sum(a != np.asarray(acc, dtype=np.int64))),
        "int8 saturated (|Y| > 383)": int(np.sum(np.abs(ref) > 383)),
    }


# --- edge classes -----------------------------------------------------------------------------------

def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _ulps(s: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """float32 `s` (> 0) moved by `steps` ulps (kept positive and finite)."""
    b = _f32(s).view(np.uint32).astype(np.int64) + steps
    return np.clip(b, 1, 0x7F7FFFFF).astype(np.uint32).view(np.float32)


def _log_uniform(rng, lo: float, hi: float, n: int) -> np.ndarray:
    return _f32(np.exp(rng.uniform(np.log(lo), np.log(hi), n)))


def _i32(x) -> np.ndarray:
    return np.clip(np.asarray(x, dtype=np.int64), I32_MIN, I32_MAX).astype(np.int32)


def _signed_magnitudes(rng, n: int, lo_bits: float = 0.0, hi_bits: float = 31.0) -> np.ndarray:
    mag = np.floor(2.0 ** rng.uniform(lo_bits, hi_bits, n))
    return np.where(rng.integers(0, 2, n) == 1, mag, -mag).astype(np.int64)


def random_calibration(rng, n):
    """Scales as calibration gives them (1e-6..1, log-uniform); accumulators over all of int32,
    log-uniform magnitudes, and around the unsaturated region."""
    s = _log_uniform(rng, 1e-6, 1.0, n)
    kind = rng.integers(0, 3, n)
    a = np.where(kind == 0, rng.integers(I32_MIN, I32_MAX + 1, n), _signed_magnitudes(rng, n))
    near = np.round(rng.uniform(-400, 400, n) / s.astype(np.float64)) + rng.integers(-3, 4, n)
    return _i32(np.where(kind == 2, near, a)), s


def exact_ties(rng, n):
    """X = fl(a)·s = k + 1/2 exactly, k in [−600, 600): 2k + 1 = v·w with v = gcd(2k+1, odd),
    a = ±v·2^z, s = w·2^-(z+1), for random z (a up to 2^31: float-exact, v is small)."""
    k = rng.integers(-KMAX, KMAX, n)
    q = np.abs(2 * k + 1)
    v = np.gcd(q, 2 * rng.integers(0, 600, n) + 1)
    w = q // v
    vbits = np.floor(np.log2(v)).astype(np.int64) + 1
    z = rng.integers(0, 1 << 20, n) % (31 - vbits)
    a = np.where(k < 0, -v, v) << z
    s = _f32(w * np.exp2(-(z + 1).astype(np.float64)))
    return _i32(a), s


def band_by_scale(rng, n):
    """X within a few half-ulps of k + 1/2 from the scale's side: a random, s = fl((k + 1/2)/a)
    moved by −6..6 ulps (X moves by ~a·ulp(s) ≈ 2 half-ulps of X per step)."""
    a = _signed_magnitudes(rng, n)
    a = np.where(a == 0, 1, a)
    t = rng.integers(-KMAX, KMAX, n) + 0.5
    a = np.where((t < 0) != (a < 0), -a, a)
    s = _ulps(_f32(t / a.astype(np.float64)), rng.integers(-6, 7, n))
    return _i32(a), s


def band_by_acc(rng, n):
    """X walking across k + 1/2 in steps of a small scale (1e-10..1e-4): a = round((k + 1/2)/s) + j,
    j in [−64, 64]; |a| > 2^24 where s < ~3e-5 (fl(a) rounds)."""
    s = _log_uniform(rng, 1e-10, 1e-4, n)
    t = rng.integers(-KMAX, KMAX, n) + 0.5
    return _i32(np.round(t / s.astype(np.float64)) + rng.integers(-64, 65, n)), s


def _odd_factor_pairs(targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For odd targets N < 2^31: (index, d, N / d) over every divisor pair with d ≤ N / d, d > 1."""
    d = np.arange(3, int(np.sqrt(targets.max())) + 2, 2, dtype=np.int64)
    rows, cols = [], []
    for lo in range(0, len(targets), 512):
        block = targets[lo:lo + 512]
        ok = (block[:, None] % d[None, :] == 0) & (d[None, :] * d[None, :] <= block[:, None])
        i, j = np.nonzero(ok)
        rows.append(i + lo)
        cols.append(j)
    i, j = np.concatenate(rows), np.concatenate(cols)
    return i, d[j], targets[i] // d[j]


def band_edge_table(fine: int) -> dict[str, np.ndarray]:
    """Exact products at and around the band edges: X = ±(n + 1/2 ± 2^(L−25)) (L = bitlen n,
    a float32 tie of the product), and X = (edge·2^g + δ)·2^(L−25−g), δ = ±1, g = 1..fine (just
    inside and outside the band), as N·2^(L−25−g) with N = a1·M1 factored: a1 < 2^24, M1 < 2^24
    the scale's significand."""
    n = np.arange(0, KMAX, dtype=np.int64)
    L = np.array([int(x).bit_length() for x in n], dtype=np.int64)
    targets, exps = [], []
    for side in (1, -1):
        edge = (2 * n + 1) << (24 - L)
        edge = edge + side
        targets.append(edge)
        exps.append(L - 25)
        for g in range(1, fine + 1):
            for delta in (1, -1):
                targets.append((edge << g) + delta)
                exps.append(L - 25 - g)
    N = np.concatenate(targets)
    X_exp = np.concatenate(exps)
    keep = N < (1 << 31)
    N, X_exp = N[keep], X_exp[keep]
    i, d, e = _odd_factor_pairs(N)
    a1 = np.concatenate([d, e])
    m1 = np.concatenate([e, d])
    x_exp = np.concatenate([X_exp[i], X_exp[i]])
    ok = (a1 < (1 << 24)) & (m1 < (1 << 24))
    return {"a1": a1[ok], "m1": m1[ok], "x_exp": x_exp[ok]}


def band_edges(rng, n, table):
    """Pairs from `band_edge_table`: a = ±a1·2^z, s = M1·2^(x_exp − z), random z ≥ 0."""
    pick = rng.integers(0, len(table["a1"]), n)
    a1, m1, x_exp = table["a1"][pick], table["m1"][pick], table["x_exp"][pick]
    abits = np.floor(np.log2(a1)).astype(np.int64) + 1
    z = rng.integers(0, 1 << 20, n) % (32 - abits)
    a = np.where(rng.integers(0, 2, n) == 1, a1, -a1) << z
    s = _f32(m1 * np.exp2((x_exp - z).astype(np.float64)))
    return _i32(a), s


def big_accumulators(rng, n):
    """|acc| around 2^24, 2^31 − 1 and −2^31, and float32 rounding ties of acc (odd multiples of
    half its ulp), with scales bringing X near k + 1/2 (stepped in ulps) or tiny (1e-10..1e-7)."""
    kind = rng.integers(0, 4, n)
    j = rng.integers(0, 400, n)
    sign = np.where(rng.integers(0, 2, n) == 1, 1, -1)
    k = rng.integers(1, 8, n)                                          # ulp 2^k for |a| in [2^(23+k), 2^(24+k))
    tie = ((2 * rng.integers(1 << 22, 1 << 23, n) + 1) << (k - 1))     # odd multiple of 2^(k−1)
    a = np.select([kind == 0, kind == 1, kind == 2],
                  [sign * ((1 << 24) + j - 200), I32_MAX - j, I32_MIN + j], sign * tie)
    t = rng.integers(-KMAX, KMAX, n) + 0.5
    s_near = _ulps(_f32(np.abs(t / a.astype(np.float64))), rng.integers(-6, 7, n))
    s = np.where(rng.integers(0, 4, n) == 0, _log_uniform(rng, 1e-10, 1e-7, n), s_near)
    return _i32(a), s


SPECIAL_SCALES = _f32(np.concatenate([
    np.exp2(np.arange(-45, 26, dtype=np.float64)),                  # powers of two
    np.array([0.0, -0.0, 1e-45, 1e-40, 1e-38, 1e-12, 1e-10, 2.0**-32, 1e-9, 1e-6, 0.1, 0.5, 1.5, 3.0,
              100.0, 1e3, 1e6, 2.0**22, 2.0**22 + 1, 2.0**23, 1e10, 3.4e38]),
]))


def special_scales(rng, n):
    """Scales that are powers of two (2^-45..2^25), near 1, 2^-32 and 2^22 (±3 ulps), zero, subnormal,
    tiny (1e-10) and huge (up to 3.4e38), with structured accumulators."""
    base = SPECIAL_SCALES[rng.integers(0, len(SPECIAL_SCALES), n)]
    near = _ulps(_f32(np.array([1.0, 2.0**-32, 2.0**22]))[rng.integers(0, 3, n)], rng.integers(-3, 4, n))
    s = np.where(rng.integers(0, 3, n) == 0, near, base)
    kind = rng.integers(0, 3, n)
    a = np.select([kind == 0, kind == 1], [rng.integers(-1000, 1001, n), _signed_magnitudes(rng, n)],
                  rng.choice(np.array([0, 1, -1, I32_MAX, I32_MIN, 1 << 24, -(1 << 24), (1 << 24) + 1]), n))
    return _i32(a), s


CLASSES = {
    "random calibration scales (1e-6..1)": random_calibration,
    "exact ties k + 1/2": exact_ties,
    "band around k + 1/2 (scale steps)": band_by_scale,
    "band around k + 1/2 (acc steps, small scales)": band_by_acc,
    "band edges, exact product ties and just inside/outside": band_edges,
    "|acc| near 2^24, 2^31 - 1, -2^31, acc rounding ties": big_accumulators,
    "special scales (powers of two, ~1, 0, subnormal, tiny, huge)": special_scales,
}


def check_chunk(rng, n: int, table) -> dict[str, dict[str, int]]:
    """One chunk of `n` pairs per class: pairs, differences (integer vs numpy float32, the float32 vs
    the double route, and the int8 / uint8 outputs over random zero points) and boundary hits."""
    out = {}
    for name, gen in CLASSES.items():
        acc, s = gen(rng, n, table) if gen is band_edges else gen(rng, n)
        ref = float_reference(acc, s)
        got = integer_result(acc, s)
        diff = int(np.sum(got != ref))
        diff_double = int(np.sum(double_reference(acc, s) != ref))
        u8 = rng.integers(0, 2, n) == 1
        zp = np.where(u8, rng.integers(0, 256, n), rng.integers(-128, 128, n))
        qmin, qmax = np.where(u8, 0, -128), np.where(u8, 255, 127)
        diff_q = int(np.sum(np.clip(got + zp, qmin, qmax) != np.clip(ref + zp, qmin, qmax)))
        out[name] = {"pairs": n, "differences": diff, "float32_vs_double_route": diff_double,
                     "int8_uint8_differences": diff_q, **hits(acc, s)}
    return out


def run(pairs: int, chunk: int, seed: int, fine: int = 6, log=print) -> dict:
    rng = np.random.default_rng(seed)
    table = band_edge_table(fine)
    per_class = max(1, chunk // len(CLASSES))
    rounds = max(1, -(-pairs // (per_class * len(CLASSES))))
    total: dict[str, dict[str, int]] = {}
    t0 = time.time()
    for i in range(rounds):
        for name, row in check_chunk(rng, per_class, table).items():
            acc = total.setdefault(name, dict.fromkeys(row, 0))
            for k, v in row.items():
                acc[k] += v
        if log and (i + 1) % 10 == 0:
            done = (i + 1) * per_class * len(CLASSES)
            log(f"{done / 1e6:.0f} M pairs, {time.time() - t0:.0f} s, "
                f"differences {sum(r['differences'] + r['int8_uint8_differences'] for r in total.values())}")
    return {
        "what": "tilewise/golden/onnx_requant_exact.py round_product vs numpy float32 rint(fl(fl(acc)*scale)), "
                "clamped to +-2^22; int8/uint8 outputs over random zero points",
        "seed": seed, "pairs": sum(r["pairs"] for r in total.values()),
        "differences": sum(r["differences"] + r["int8_uint8_differences"] + r["float32_vs_double_route"]
                           for r in total.values()),
        "band_edge_table_rows": len(table["a1"]), "seconds": round(time.time() - t0),
        "classes": total,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=float, default=300e6)
    ap.add_argument("--chunk", type=float, default=2.1e6)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    result = run(int(args.pairs), int(args.chunk), args.seed)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{result['pairs']:,} pairs, {result['differences']} differences -> {args.out}")


if __name__ == "__main__":
    main()
