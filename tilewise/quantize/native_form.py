"""Whether the form `tilewise quantize` wrote is the cheapest its target runs (issue 27).

An onnx-mode model (QDQ ONNX) keeps onnxruntime's requantization — float32(acc) · float32(scale),
rounded half to even — exactly, which costs more per output on most kernels than TFLite's
fixed-point form (one multiply-high and a shift, seed 004 §2.3's requantization). When the same
calibration written as a TFLite model (`-o OUT.tflite`: the same ranges, TFLite's rounding) is
predicted cheaper on the target, quantize says so, with both figures: both forms are compiled by the
pipeline (`pipeline.compile`) and compared by their predicted cycles (`NetworkSchedule.cycles`,
the figure `analyze` prints). The onnx form stays the faithful onnxruntime one; the user chooses.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import TilewiseError
from ..targets.base import Target

#: the TFLite form is mentioned when the written model is predicted this much slower than it
NOTE_ABOVE = 1.10


@dataclass(frozen=True)
class FormCosts:
    """Predicted cycles on `target` of the model written (`written`: "onnx") and of the same
    calibration in the target's cheaper form (`other`: "tflite")."""

    target: str
    written: str
    written_cycles: float
    other: str
    other_cycles: float

    @property
    def ratio(self) -> float:
        """written / other: above 1 the other form is cheaper."""
        return self.written_cycles / self.other_cycles if self.other_cycles else 1.0

    def to_json(self) -> dict:
        return {"target": self.target, "written": self.written, "written_cycles": round(self.written_cycles),
                "other": self.other, "other_cycles": round(self.other_cycles), "ratio": round(self.ratio, 3)}

    def note(self, out: Path) -> str | None:
        """One sentence when the other form is predicted more than NOTE_ABOVE× cheaper, else None."""
        if self.ratio <= NOTE_ABOVE:
            return None
        return (f"on {self.target} the same calibration as TFLite (-o {out.with_suffix('.tflite').name}: TFLite's "
                f"fixed-point requantization) is predicted at {self.other_cycles:,.0f} cycles, {self.ratio:.2f}× "
                f"fewer than this QDQ model's {self.written_cycles:,.0f} (onnxruntime's float requantization, "
                f"kept exactly); write it where onnxruntime's rounding is not required")


def tflite_form_costs(onnx_path: Path, tflite_bytes: bytes, target: Target) -> FormCosts | None:
    """Predicted cycles of the written QDQ model and of its TFLite form on `target`; None when
    either does not compile there (analyze then says why for the one the user runs)."""
    from ..pipeline import compile as compile_model

    with tempfile.TemporaryDirectory(prefix="tilewise_form_") as tmp:
        tfl = Path(tmp) / "form.tflite"
        tfl.write_bytes(tflite_bytes)
        try:
            written = compile_model(onnx_path, target).cycles
            other = compile_model(tfl, target).cycles
        except TilewiseError:
            return None
    return FormCosts(target.name, "onnx", float(written), "tflite", float(other))
