"""Plain-text rendering of a ValidationReport (what `tilewise validate` and `demo` print)."""

from __future__ import annotations

from .check import ValidationReport


def _kb(b: int | None) -> str:
    return "-" if b is None else f"{b / 1024:,.1f} kB"


def format_report(r: ValidationReport) -> str:
    verdict = "BIT-EXACT" if r.bit_exact else "MISMATCH"
    compared = r.reference and r.golden_vs_reference is not None
    ref = f" and {r.reference}" if compared else ""
    lines = [
        f"tilewise validate — {r.model} on {r.target} (tiler {r.tiler}, L1 {_kb(r.l1_free_bytes)} free)",
        f"  result:      {verdict}: generated C vs golden model{ref} on {r.inputs} inputs "
        f"(random + all-min + all-max)",
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
                 f"({r.dma_transfers_measured} / {r.dma_transfers_predicted} transfers, "
                 f"{r.dma_chunks_measured} / {r.dma_chunks_predicted} chunks)")
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
                     f"on the Cortex-M7 emulator), {pred:,.0f} predicted (measured / predicted "
                     f"{r.measured_instructions / pred if pred else float('nan'):.2f})")
        for lc in r.layer_cycles:
            m, p = lc.get("measured_instructions"), lc.get("predicted_instructions") or 0.0
            ratio = f"{m / p:6.2f}" if m is not None and p else "     -"
            lines.append(f"    layer {lc['index']:>3} {lc['name'][:28]:<28} {lc['op']:<16} "
                         f"{m if m is not None else '-':>11,} measured {p:>11,.0f} predicted "
                         f"{ratio}")
    lines.append(f"  peak L2:     {r.peak_l2_bytes:,} B (memory plan)")
    lines.append(f"  project:     {r.project}")
    shown = 0
    for m in r.mismatches:
        if shown == 8:
            lines.append(f"  ... {len(r.mismatches) - shown} more mismatches")
            break
        shown += 1
        if m["kind"] == "output":
            lines.append(f"  mismatch:    input {m['input']}: {m['elements']} output elements differ "
                         f"from {m['against']}")
        else:
            detail = ", ".join(f"{k} {v}" for k, v in m.items() if k != "kind")
            lines.append(f"  mismatch:    {m['kind']}: {detail}")
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
    return "\n".join(lines)
