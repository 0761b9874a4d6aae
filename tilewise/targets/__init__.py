"""Targets as data: memories, execution modules, their kernels' per-chip cost coefficients; one
file per chip (the cost models themselves: bindings/<family>/cost.py)."""

from ..bindings.cost_terms import KernelModel
from .base import KB, MB, Memory, Module, Target
from .registry import get_target, list_targets

__all__ = ["KB", "MB", "KernelModel", "Memory", "Module", "Target", "get_target", "list_targets"]
