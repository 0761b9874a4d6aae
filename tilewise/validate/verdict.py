"""The `result:` line of a validation report: the verdict and what was compared with what.

BIT-EXACT names every comparison that held (the generated C against the golden model, and the
reference runtime when its integers are exact). A MISMATCH names only the comparisons that
failed: the C against the golden model, the reference runtime or the user's --expected file; the
golden model against the reference; the measured DMA / L3 / accelerator counters against the
schedule's prediction; the host HAL's checks; and a program that did not run to its end (a crash,
a non-zero exit, a simulator that could not start) is said as such, not as differing outputs.
"""

from __future__ import annotations

from .report import OutputMismatch

#: mismatch kinds that hold a measured counter against the schedule's prediction
#: (report.COUNTER_KINDS, in the order said)
COUNTERS = {"dma_bytes": "DMA bytes", "dma_transfers": "DMA transfers",
            "dma_chunks": "DMA chunks", "l3_bytes": "L3 bytes", "l3_transfers": "L3 transfers",
            "accelerator_jobs": "accelerator jobs"}
#: where the generated C ran (ValidationReport.platform)
PLATFORMS = {"host": "the host", "gvsoc": "GVSoC", "qemu": "QEMU",
             "count": "the instruction-counting emulator"}


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _against(r, m: OutputMismatch) -> str:
    """How an output mismatch's `against` is said."""
    a = m.against
    if a == "golden":
        return "golden model"
    if a == "expected":
        exp = (r.metrics or {}).get("vs_expected") or {}
        return f"the expected outputs ({exp['file']})" if exp.get("file") else "the expected outputs"
    return str(a)


def result_line(r) -> str:
    """`BIT-EXACT: generated C vs ...` or `MISMATCH: <what failed against what>`, then the inputs."""
    data = (r.metrics or {}).get("data") or {}
    source = (f"on {r.inputs} inputs "
              + (f"(from {data['file']})" if r.metrics else "(random + all-min + all-max)"))
    if r.bit_exact:
        compared = r.reference and r.golden_vs_reference is not None and not r.reference_inexact
        return f"BIT-EXACT: generated C vs golden model{f' and {r.reference}' if compared else ''} {source}"
    fails = r.failures
    kinds = {m.kind for m in fails}
    clauses = []
    if "run" in kinds:
        clauses.append(f"the generated C did not run to its end on "
                       f"{PLATFORMS.get(r.platform, r.platform)} (see 'mismatch: run' below)")
    against = _unique([_against(r, m) for m in fails if isinstance(m, OutputMismatch)])
    if against:
        clauses.append("generated C vs " + " and ".join(against))
    if "golden_layer" in kinds:
        clauses.append("generated C vs the exporter's golden data layer by layer")
    if "golden_vs_reference" in kinds:
        clauses.append(f"golden model vs {r.reference}")
    counters = _unique([COUNTERS[k] for k in COUNTERS if k in kinds])
    if counters:
        clauses.append(", ".join(counters) + " measured vs the schedule's prediction")
    if "hal" in kinds:
        clauses.append("the host HAL's checks (races, waits)")
    known = {"run", "output", "golden_layer", "golden_vs_reference", "hal", *COUNTERS}
    clauses += sorted(str(k) for k in kinds - known)
    return f"MISMATCH: {'; '.join(clauses)} {source}"
