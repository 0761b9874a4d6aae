"""Validation: build generated projects with the system C compiler, run them on the host and hold
them bit for bit against the golden model and the reference runtime, with the DMA bytes each
inference moves against the schedule's prediction (check.py; build.py, run.py, reference.py,
locate.py, text.py); the comparisons, the same for the host and the firmware runners, are
compare.py's, the report and its typed mismatches report.py's. The inputs and golden outputs it
checks on come from golden/inputs.py and golden/samples.py. On the user's own inputs
(`validate --data`): own_data.py reads them (data.py), adds metrics (metrics.py) and per-layer
error statistics (layer_errors.py)."""

from ..golden.inputs import make_inputs
from ..golden.samples import golden_outputs
from .check import check_project, new_report, validate_model, validate_network, validate_path
from .report import ValidationReport

__all__ = ["ValidationReport", "check_project", "golden_outputs", "make_inputs", "new_report",
           "validate_model", "validate_network", "validate_path"]
