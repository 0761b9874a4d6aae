"""The NE16 kernel family (GAP9's accelerator): its arithmetic and weight layout (arith.py) and the
task API with the functional model the host HAL runs jobs with (c/tw_ne16.h, c/tw_ne16.c).

Bindings (legality, the NE16 cost model, the constants layout, the generated calls) and the gap9
module that holds them come next (issue 11); today the family is the bit-exact statement of a job
both ways, numpy and C, tested against the golden convolution (tests/test_ne16.py).
"""

from . import arith

__all__ = ["arith"]
