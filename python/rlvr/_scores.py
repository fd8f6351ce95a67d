"""Shared by the adapters: response text from conversational completions, and a result dict
turned into the numbers trainers log (ground truths: `rlvr.ground_truth`)."""

from __future__ import annotations

from typing import Any, Dict, Optional


def response_text(completion: Any) -> str:
    """A completion as text: a string, or the last message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, (list, tuple)) and completion:
        last = completion[-1]
        return str(last.get("content", "")) if isinstance(last, dict) else str(last)
    return ""


def numbers(result: Dict[str, Any]) -> Dict[str, float]:
    """Numeric fields only (verl collects them into arrays): unscored jobs give 0.0 with the
    flag `unscored` = 1.0, never silently."""
    score: Optional[float] = result.get("score")
    pass_rate: Optional[float] = result.get("pass_rate")
    return {
        "score": float(score) if score is not None else 0.0,
        "pass_rate": float(pass_rate) if pass_rate is not None else 0.0,
        "passed": float(result.get("passed", 0)),
        "total": float(result.get("total", 0)),
        "all_passed": float(bool(result.get("all_passed"))),
        "sandbox_error": float(result.get("status") == "sandbox_error"),
        "checker_error": float(result.get("status") == "checker_error"),
        "unscored": float(score is None),
    }
