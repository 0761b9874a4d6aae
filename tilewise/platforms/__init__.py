"""Platforms: the software around a chip — HAL, firmware, toolchain, runners — as values a
target names (base.py `Platform`; one module per platform, one per runner)."""

from .base import HOST_ONLY, Execution, Platform, Runner, Toolchain

__all__ = ["HOST_ONLY", "Execution", "Platform", "Runner", "Toolchain"]
