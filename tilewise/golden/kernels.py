"""Imports every golden kernel module so that each registers its ops (golden/registry.py).

Add a new kernel module here when you create one.
"""

from . import (
    activation,  # noqa: F401
    elementwise,  # noqa: F401
    int_ops,  # noqa: F401
    linear,  # noqa: F401
    lstm,  # noqa: F401
    onnx_ops,  # noqa: F401
    pool,  # noqa: F401
    quant_ops,  # noqa: F401
    shape_ops,  # noqa: F401
    svdf,  # noqa: F401
)
