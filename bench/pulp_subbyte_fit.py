"""Table 10b — the pulp sub-byte conv's cost model (bindings/pulp/subbyte.py `SubbyteCost`) fitted
on GVSoC: one firmware (the harness of tests/test_pulp_subbyte.py, tests/c/pulp_subbyte_main.c)
times tw_pulp_conv2d_sb on GEOMETRIES below — 1×1, 3×3 and 5×5 kernels, 8 to 64 input and 4 to
64 output channels, 4 to 100 output pixels, every weight width with several activation widths,
shift32 requantization — on 1 and 8 cores; least squares on the 1-core cycles of

    cycles = Σ_w mac[w]·MACs + Σ_x unpack[x]·pixels·FY·FX·C + out·pixels·K + tap·pixels·FY·FX + call

(MatMul per MAC by weight width; im2col per reduction element by input width; per output the
QntPack requantization, packing and block set-up; per receptive-field tap the im2col's call and
bounds check; per call the fork and the core split), then the 8-core spread = 8·cycles(8) /
(cycles(1) − call) − fitted over the same cases. Every output is compared with the numpy
reference; a mismatch stops the script.

`python bench/pulp_subbyte_fit.py` prints the fit and each case's predicted / measured cycles and
writes bench/pulp_subbyte_fit.json; SubbyteCost holds the coefficients (rounded) and
tests/test_pulp_subbyte.py holds its predictions against a fresh GVSoC run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scipy.optimize import nnls  # noqa: E402

from bench.pulp_subbyte import run_cases  # noqa: E402
from tests import pulp_subbyte_cases as sb  # noqa: E402
from tilewise.bindings.pulp.subbyte import SubbyteCost  # noqa: E402
from tilewise.ir.layer import LoopNest  # noqa: E402

HERE = Path(__file__).resolve().parent
CORES = (1, 8)
#: (h, w, c, k, fy, fx, (x, w, y) bits, pads)
P1, P2 = (1, 1, 1, 1), (2, 2, 2, 2)
GEOMETRIES = (
    (8, 8, 16, 16, 3, 3, (8, 4, 4), P1), (8, 8, 16, 16, 3, 3, (4, 4, 4), P1),
    (8, 8, 16, 16, 3, 3, (2, 2, 2), P1), (8, 8, 16, 16, 3, 3, (4, 2, 2), P1),
    (8, 8, 16, 16, 3, 3, (8, 8, 4), P1), (8, 8, 32, 32, 1, 1, (4, 4, 4), (0, 0, 0, 0)),
    (8, 8, 32, 32, 1, 1, (2, 2, 8), (0, 0, 0, 0)), (8, 8, 32, 32, 1, 1, (8, 4, 4), (0, 0, 0, 0)),
    (10, 10, 8, 8, 3, 3, (4, 8, 4), P1), (6, 6, 64, 64, 3, 3, (4, 4, 4), P1),
    (6, 6, 64, 64, 3, 3, (2, 2, 2), P1), (6, 6, 64, 64, 3, 3, (8, 2, 8), P1),
    (5, 5, 16, 8, 5, 5, (4, 4, 4), P2), (5, 5, 16, 8, 5, 5, (2, 4, 2), P2),
    (4, 4, 32, 4, 3, 3, (8, 4, 8), P1), (4, 4, 32, 64, 3, 3, (4, 2, 4), P1),
    (1, 1, 256, 16, 1, 1, (4, 4, 8), (0, 0, 0, 0)), (1, 1, 512, 10, 1, 1, (2, 4, 8), (0, 0, 0, 0)),
    (12, 12, 8, 16, 3, 3, (8, 4, 2), (0, 0, 0, 0)), (7, 7, 32, 16, 3, 3, (8, 8, 2), P1),
    # small layers (a few thousand cycles: the per-call and per-output terms)
    (1, 1, 64, 10, 1, 1, (4, 2, 8), (0, 0, 0, 0)), (1, 1, 48, 6, 1, 1, (8, 4, 4), (0, 0, 0, 0)),
    (1, 1, 128, 32, 1, 1, (2, 2, 2), (0, 0, 0, 0)), (3, 5, 16, 8, 1, 1, (2, 4, 8), (0, 0, 0, 0)),
    (4, 4, 8, 16, 3, 3, (4, 8, 2), P1), (3, 3, 8, 24, 2, 2, (4, 4, 8), (0, 0, 0, 0)),
    (4, 3, 4, 6, 3, 3, (8, 8, 4), P1),
)


def _name(g) -> str:
    h, w, c, k, fy, fx, bits, _ = g
    return f"{h}x{w}x{c}->{k} {fy}x{fx} x{bits[0]}w{bits[1]}y{bits[2]}"


def cases() -> list[sb.SbCase]:
    rng = np.random.default_rng(10)
    return [sb.make_case(_name(g), rng, *g[:6], g[6], pads=g[7], cores=CORES) for g in GEOMETRIES]


def nest(c: sb.SbCase) -> LoopNest:
    """The case as the layer the binding would price: a 1x1 conv on a 1x1 input is dense."""
    h, w, oy, ox, fy, fx, sy, sx, pt, pl, pb, pr, cin, k, xb, wb, yb = c.prm[:17]
    if (h, w, fy, fx) == (1, 1, 1, 1):
        return LoopNest("fc", K=k, C=cin, OY=1, OX=1, x_bits=xb, w_bits=wb, y_bits=yb)
    return LoopNest("conv", K=k, C=cin, OY=oy, OX=ox, FY=fy, FX=fx, SY=sy, SX=sx,
                    pads=(pt, pl, pb, pr), IY=h, IX=w, x_bits=xb, w_bits=wb, y_bits=yb)


#: the per-unit coefficients fitted on one core (SubbyteCost fields)
UNITS = tuple(f"mac{b}" for b in (8, 4, 2)) + tuple(f"unpack{b}" for b in (8, 4, 2)) + \
    ("out", "tap", "call_1")


def model(fit: dict[str, float]) -> SubbyteCost:
    return SubbyteCost(mac=tuple((b, fit[f"mac{b}"]) for b in (8, 4, 2)),
                       unpack=tuple((b, fit[f"unpack{b}"]) for b in (8, 4, 2)),
                       out=fit["out"], tap=fit["tap"], call_1=fit["call_1"],
                       call_8=fit.get("call_8", 0.0), spread_8=fit.get("spread_8", 1.0))


def fit_model(cs: list[sb.SbCase], y1: np.ndarray, y8: np.ndarray) -> dict[str, float]:
    """Least squares on the relative error (non-negative): the units on the 1-core cycles (each
    unit's column is the model's 1-core prediction with that unit alone at 1), then spread_8 and
    call_8 on the 8-core cycles given them."""
    def column(name: str, cores: int) -> np.ndarray:
        fit = {u: 0.0 for u in UNITS} | {name: 1.0}
        return np.array([model(fit).cycles(nest(c), cores) for c in cs])

    a = np.stack([column(u, 1) for u in UNITS], axis=1) / y1[:, None]
    coef, _ = nnls(a, np.ones(len(cs)))
    fit = dict(zip(UNITS, (float(v) for v in coef)))
    work8 = np.array([model(fit | {"call_1": 0.0}).cycles(nest(c), 8) for c in cs])
    (s, call8), _ = nnls(np.stack([work8, np.ones(len(cs))], axis=1) / y8[:, None],
                         np.ones(len(cs)))
    return fit | {"spread_8": float(s), "call_8": float(call8)}


def measure() -> dict:
    cs = cases()
    got = run_cases(cs, who="bench/pulp_subbyte_fit.py")
    y1 = np.array([got[(c.name, 1)] for c in cs], float)
    y8 = np.array([got[(c.name, 8)] for c in cs], float)
    fit = fit_model(cs, y1, y8)
    used = SubbyteCost()
    rows = []
    for c, m1, m8 in zip(cs, y1, y8):
        p = {n: used.cycles(nest(c), n) for n in CORES}
        rows.append({"case": c.name, "macs": c.macs, "measured": {"1": int(m1), "8": int(m8)},
                     "predicted": {str(n): round(v) for n, v in p.items()},
                     "ratio": {"1": round(p[1] / m1, 3), "8": round(p[8] / m8, 3)}})
    return {"fit": fit, "cases": rows}


def main() -> None:
    r = measure()
    print("fit:", {k: round(v, 3) for k, v in r["fit"].items()})
    print("SubbyteCost (the binding's figures) predicted / measured:")
    for row in r["cases"]:
        print(f"{row['case']:34s} {row['macs']:>8,} MACs  1 core {row['measured']['1']:>9,} "
              f"pred {row['ratio']['1']:.2f}   8 cores {row['measured']['8']:>8,} "
              f"pred {row['ratio']['8']:.2f}")
    (HERE / "pulp_subbyte_fit.json").write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
