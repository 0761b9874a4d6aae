"""Imports every golden kernel module so that each registers its ops (golden/registry.py).

Add a new kernel module here when you create one.
"""

from . import linear  # noqa: F401
