"""Partition: which module runs each layer, with which binding, chosen by predicted cost."""

from .choose import (OBJECTIVES, Candidate, Choice, Objective, Partition, check_network, choose,
                     partition)

__all__ = ["OBJECTIVES", "Candidate", "Choice", "Objective", "Partition", "check_network",
           "choose", "partition"]
