"""Targets as data: memories, execution modules, kernel cost models; one file per chip."""

from .base import KB, MB, KernelModel, Memory, Module, Target
from .registry import get_target, list_targets

__all__ = ["KB", "MB", "KernelModel", "Memory", "Module", "Target", "get_target", "list_targets"]
