"""Imports every golden kernel module so that each registers its ops (golden/registry.py).

Add a new kernel module here when you create one.
"""

from . import linear  # noqa: F401
from . import elementwise  # noqa: F401
from . import pool  # noqa: F401
from . import activation  # noqa: F401
from . import shape_ops  # noqa: F401
from . import quant_ops  # noqa: F401
from . import onnx_ops  # noqa: F401
from . import int_ops  # noqa: F401
