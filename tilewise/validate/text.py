"""Plain-text rendering of a ValidationReport (what `tilewise validate` and `demo` print)."""

from __future__ import annotations

from .report import OutputMismatch, ValidationReport
from .verdict import result_line


def _kb(b: int | None) -> str:
    return "-" if b is None else f"{b / 1024:,.1f} kB"


def _or_dash(v: object) -> str:
    """A measured value, "-" when nothing was measured (the program did not run)."""
    return "-" if v is None else str(v)


def format_report(r: ValidationReport) -> str:
    lines = [
        f"tilewise validate — {r.model} on {r.target} (tiler {r.tiler}, L1 {_kb(r.l1_free_bytes)} free)",
        f"  result:      {result_line(r)}",
    ]
    if r.golden_vs_reference is not None:
        lines.append(f"  golden vs {r.reference}: {r.golden_vs_reference} differing elements")
    elif r.reference:
        lines.append(f"  reference:   {r.reference}")
    for note in r.reference_notes:
        lines.append(f"  reference:   {note}")
    lines += [f"  note:        {n}" for n in r.notes]
    ok = "=" if r.dma_bytes_measured == r.dma_bytes_predicted else "!="
    lines.append(f"  DMA L2<->L1: {r.dma_bytes_measured if r.dma_bytes_measured is not None else '-'} B "
                 f"measured per inference {ok} {r.dma_bytes_predicted} B predicted "
                 f"({_or_dash(r.dma_transfers_measured)} / {r.dma_transfers_predicted} transfers, "
                 f"{_or_dash(r.dma_chunks_measured)} / {r.dma_chunks_predicted} chunks)")
    if r.jobs_predicted:
        ok = "=" if r.jobs_measured == r.jobs_predicted else "!="
        lines.append(f"  accel jobs:  {r.jobs_measured} measured per inference {ok} "
                     f"{r.jobs_predicted} predicted")
    if r.l3_bytes_predicted:
        lines.append(f"  L3 -> L2:    {r.l3_bytes_measured} B measured / {r.l3_bytes_predicted} B "
                     f"predicted per inference (weights streamed from L3)")
    if r.hal:
        lines.append(f"  host HAL:    {r.hal.get('races', 0)} races, {r.hal.get('bad_waits', 0)} bad "
                     f"waits, {r.hal.get('pending', 0)} transfers never waited, at most "
                     f"{r.hal.get('max_pending', 0)} in flight")
    if r.measured_cycles is not None:
        pred = r.predicted_cycles or 0.0
        lines.append(f"  cycles:      {r.measured_cycles:,} measured on {r.platform} per inference, "
                     f"{pred:,.0f} predicted (measured / predicted {r.measured_cycles / pred:.2f})"
                     if pred else f"  cycles:      {r.measured_cycles:,} measured on {r.platform}")
        for lc in r.layer_cycles:
            m, p = lc["measured_cycles"], lc["predicted_cycles"]
            ratio = f"{m / p:6.2f}" if m is not None and p else "     -"
            lines.append(f"    layer {lc['index']:>3} {lc['name'][:28]:<28} {lc['op']:<16} "
                         f"{m if m is not None else '-':>11,} measured {p:>11,.0f} predicted {ratio}")
    if r.measured_instructions is not None:
        pred = r.predicted_instructions or 0.0
        lines.append(f"  instructions: {r.measured_instructions:,} executed per inference (counted "
                     f"in the Cortex-M emulator), {pred:,.0f} predicted (measured / predicted "
                     f"{r.measured_instructions / pred if pred else float('nan'):.2f})")
        est = r.estimated_cycles
        if est is not None:
            pc = r.predicted_cycles or 0.0
            lines.append(f"  estimated cycles ({r.estimated_core} model): {est:,} per inference = "
                         f"{est / max(r.measured_instructions, 1):.2f} per instruction "
                         f"({r.estimated_cycles_model})"
                         + (f"; {pc:,.0f} predicted by the target's cost model (estimated / "
                            f"predicted {est / pc:.2f})" if pc else ""))
        short = (r.estimated_core or "").replace("Cortex-", "")
        for lc in r.layer_cycles:
            m, p = lc.get("measured_instructions"), lc.get("predicted_instructions") or 0.0
            ratio = f"{m / p:6.2f}" if m is not None and p else "     -"
            e, pe = lc.get("estimated_cycles"), lc.get("predicted_cycles")
            lines.append(f"    layer {lc['index']:>3} {lc['name'][:28]:<28} {lc['op']:<16} "
                         f"{f'{m:,}' if m is not None else '-':>11} instr. measured {p:>11,.0f} predicted "
                         f"{ratio}" + (f" | {e:>11,} est. {short} cycles {pe:>11,.0f} predicted"
                                       if e is not None and pe is not None else ""))
    lines.append(f"  peak L2:     {r.peak_l2_bytes:,} B (memory plan)")
    if r.code:
        c = r.code
        lines.append(f"  flash:       {c['code_bytes'] + c['constants_bytes']:,} B = code "
                     f"{c['code_bytes']:,} B (network, layers, kernels, HAL; {c['isa']}) + constants "
                     f"{c['constants_bytes']:,} B; the test firmware around it {c['firmware_bytes']:,} B "
                     f"(start-up, main, inputs, libc)")
    lines.append(f"  project:     {r.project}")
    shown = 0
    for m in r.failures:
        if shown == 8:
            lines.append(f"  ... {len(r.failures) - shown} more mismatches")
            break
        shown += 1
        if isinstance(m, OutputMismatch):
            lines.append(f"  mismatch:    input {m.input}: {m.elements} "
                         + (f"elements of output '{m.output}'" if m.output is not None
                            else "output elements")
                         + f" differ from {m.against}")
        else:   # the fields as the JSON holds them
            detail = ", ".join(f"{k} {v}" for k, v in m.to_json().items() if k != "kind")
            lines.append(f"  mismatch:    {m.kind}: {detail}")
    fd = r.first_difference
    if fd:
        if "element" in fd:
            tile = ", ".join(f"{k}={v}" for k, v in fd.get("tile", {}).items()) or "-"
            lines.append(f"  first difference (input {fd.get('input')}): layer {fd['index']} "
                         f"'{fd['layer']}' ({fd['op']}, {fd.get('file')}), tile [{tile}], element "
                         f"(n,y,x,c)={tuple(fd['element'])}: expected {fd['expected']}, got "
                         f"{fd['got']} ({fd['differing_elements']} of {fd['elements']} differ)")
        else:
            lines.append(f"  first difference: {fd}")
    if r.golden_layers is not None:
        from .golden_files import summary

        lines += summary(r.golden_layers)
    if r.metrics:
        lines += format_metrics(r.metrics)
    return "\n".join(lines)


def _num(v: float | None, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.2f}%" if pct else f"{v:.6g}"


def _comparisons(m: dict) -> list[tuple[str, dict | None]]:
    """(key, entry) of every comparison of the metrics: the first output's, then the others'
    (their `against` naming the output)."""
    out = [(key, m.get(key)) for key in ("vs_reference", "vs_expected")]
    for o in (m.get("outputs") or [])[1:]:
        for key in ("vs_reference", "vs_expected"):
            e = o.get(key)
            if e is not None:
                e = {**e, "against": f"{e['against']} ({o['output']['name']})"}
            out.append((key, e))
    return out


def format_metrics(m: dict) -> list[str]:
    """The `metrics` of a validation on the user's data (own_data.py), as report lines."""
    lines = [f"  data:        {d['count']} inputs from {d['file']} ({d['dtype']}, {d['layout']}; "
             f"{d['values']})" for d in (m["data"].get("arrays") or [m["data"]])]
    o = m["output"]
    if o["scale"] is not None:
        lines.append(f"  metrics:     on the output dequantized (scale {o['scale']:.9g}, zero point "
                     f"{o['zero_point']}){'; acc = argmax agreement' if o['classifier'] else ''}")
    for key, e in _comparisons(m):
        if e is None:
            continue
        if "rmse" not in e:
            lines.append(f"    C vs {e['against']}: no outputs of the generated C to compare")
            continue
        lines.append(f"    C vs {e['against'][:28]:<28} acc {_num(e['acc'], True):>7}  rmse "
                     f"{_num(e['rmse']):>10}  mae {_num(e['mae']):>10}  l2r {_num(e['l2r']):>10}  "
                     f"cos {_num(e['cos']):>8}")
        if key == "vs_expected":
            mism = e.get("mismatched_elements")
            lines.append(f"    expected: {e['file']} ({e['dtype']}, {e['layout']}"
                         + (f"; {mism} of {e['elements']} elements differ bit for bit)"
                            if mism is not None else "; floats: metrics only)"))
    lab = m.get("labels")
    if lab:
        ref = lab.get("accuracy_reference")
        lines.append(f"  labels:      accuracy of the C {_num(lab['accuracy'], True)} "
                     f"({lab['correct']}/{m['inputs']})"
                     + (f", of the reference {_num(ref, True)}" if ref is not None else "")
                     + f" against {lab['file']}")
        conf = lab.get("confusion")
        if conf:
            k = len(conf)
            if k <= 12:
                w = max(3, len(str(max(max(row) for row in conf))) + 1)
                lines.append("  confusion:   rows = label, columns = predicted by the C")
                lines.append("      " + "".join(f"{j:>{w}}" for j in range(k)))
                lines += [f"    {i:>2}" + "".join(f"{v:>{w}}" for v in row) for i, row in enumerate(conf)]
            else:
                off = sorted(((conf[i][j], i, j) for i in range(k) for j in range(k)
                              if i != j and conf[i][j]), reverse=True)[:8]
                lines.append(f"  confusion:   {k}×{k} (full matrix in --json); most confused: "
                             + (", ".join(f"{i}→{j} ×{c}" for c, i, j in off) or "none"))
    fm = m.get("float_model")
    if fm:
        compared = [r for r in fm["layers"] if r["float_tensor"] is not None]
        noisy = [r for r in compared if r["float_sqnr_db"] is not None]
        worst = min(noisy, key=lambda r: r["float_sqnr_db"]) if noisy else None
        lines.append(f"  float model: {len(compared)} of {len(fm['layers'])} layers compared with "
                     f"{fm['file']}" + (f"; lowest SQNR {worst['float_sqnr_db']:.2f} dB at layer "
                                         f"{worst['index']} '{worst['name']}'" if worst else ""))
    for what in ("metrics_csv", "layer_csv"):
        for p in m.get(what) or ():
            lines.append(f"  {'metrics CSV' if what == 'metrics_csv' else 'layer CSV'}: {p}")
    return lines
