"""Table 9 — DIANA: tilewise's predicted latency of the four MLPerf Tiny models on the diana
target with the host core only and with the digital accelerator + host, next to MATCH's, HTVM's
and plain TVM's figures on DIANA silicon (seed 003 Table III, 260 MHz).

Predicted, not measured: no DIANA and no DIANA simulator is at hand. The digital core is priced by
MATCH's DIANA digital model plus the host's job set-up and, for these TFLite models, the host's
requantization of the core's int32 outputs (bindings/diana_digital/cost.py; the int32 output is a
decision, bindings/diana_digital/arith.py): MATCH's and HTVM's models are quantized for DIANA
(shift requantization on the core), so their figures carry no such host pass. The host core runs
the portable kernels (targets/diana.py); it also takes every layer the core refuses, here the
adds, pools, softmax and DS-CNN's 10×4 first conv (TFLite's asymmetric stride-2 'SAME' padding
is a digital job: bindings/diana_digital/arith.py). Every configuration is bit-exact on the host
(tests/test_diana.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from . import models, published, scheduling
from .tables import Table

#: module sets of the diana target (seed 003 Table III's DIANA columns: TVM on the host, the
#: digital accelerator with the host)
CONFIGS = (("CPU only", ("cpu",)), ("digital+CPU", ("digital", "cpu")))


def measure(names: Sequence[str] = models.MLPERF) -> Table:
    diana = scheduling.target("diana")
    rows, data = [], {}
    for name in names:
        lg = scheduling.lowered(models.model_path(name))
        pred, on_digital = {}, 0
        for label, mods in CONFIGS:
            tgt = replace(diana, modules=tuple(m for m in diana.modules if m.name in mods))
            ns = scheduling.schedule(lg, tgt, "model")
            pred[label] = ns.latency_ms
            if "digital" in mods:
                on_digital = sum(s.module == "digital" for s in ns.schedules)
        match, htvm = published.MATCH_DIANA_MS[name], published.HTVM_DIANA_MS[name]
        tvm = published.TVM_DIANA_MS[name]
        data[name] = {"predicted_ms": pred, "match_ms": match.value, "htvm_ms": htvm.value,
                      "tvm_ms": None if tvm is None else tvm.value,
                      "layers_on_digital": on_digital, "layers": len(lg.layers)}
        rows.append((f"{name} ({models.PAPER_NAMES[name]})",
                     *(round(pred[label], 3) for label, _ in CONFIGS), match.value, htvm.value,
                     "OoM" if tvm is None else tvm.value, pred["digital+CPU"] / match.value,
                     f"{on_digital} / {len(lg.layers)}"))
    return Table(
        "diana", f"Table 9 — diana: predicted latency vs DIANA silicon ({diana.clock_mhz:g} MHz, ms)",
        ("model", *(f"tilewise {label}" for label, _ in CONFIGS), "MATCH", "HTVM", "TVM (host)",
         "tilewise / MATCH", "layers on digital"),
        tuple(rows),
        notes=(f"MATCH, HTVM, TVM: {published.SEED3_T3_DIANA}.",
               "tilewise: predicted by the diana target with the listed modules; TFLite models, so "
               "the host requantizes the digital core's int32 outputs (bench/diana.py docstring)."),
        data=data,
    )
