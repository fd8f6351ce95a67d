"""Shim (ours, see tests/reference/score_upstream.py): the three names code_reward.py imports from
rllm's reward_types, with the values the scores depend on (rllm's `RewardConfig` defaults:
correct 1.0, incorrect 0.0, format error 0.0, no Together code interpreter). The current
upstream file was not in the index we read from."""

from dataclasses import dataclass, field
from enum import Enum


@dataclass
class RewardConfig:
    correct_reward: float = 1.0
    incorrect_reward: float = 0.0
    format_error_reward: float = 0.0
    unk_error_reward: float = 0.0
    use_together_code_interpreter: bool = False


class RewardType(Enum):
    MATH = "MATH"
    CODE = "CODE"
    UNK = "UNK"


@dataclass
class RewardOutput:
    reward: float
    is_correct: bool
    metadata: dict = field(default_factory=dict)
