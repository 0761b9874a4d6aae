"""The golden model: a numpy integer implementation of every IR op — the definition of what the
generated C must compute (DESIGN.md "Integer semantics")."""

from .registry import kernel
from .run import run_graph

__all__ = ["kernel", "run_graph"]
