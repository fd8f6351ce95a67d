"""rlvr redteam's harness for a Python reward function (`--python module:function`), run in the
sandbox after `runner/protocol.py` (the frame format, docs/runner.md: `read_frame`,
`write_frame`, `adopt_protocol_descriptors` come from there). Reads one request frame on stdin:
{"module", "function", "path", "nonce", "cases": [{"index", "data_source", "solution_str",
"ground_truth", "extra_info"}]}, calls function(data_source, solution_str, ground_truth,
extra_info) for each case in order, in this one process (as a trainer's reward worker does), and
writes one frame per case on its own copy of standard output: {"nonce", "index", "score"} or
{"nonce", "index", "error"}. Whatever the reward function or the programs it runs print on
standard output goes to standard error.
"""

import importlib
import json  # noqa: F401 (protocol.py reads and writes frames with it)
import math
import os
import struct  # noqa: F401 (protocol.py frames with it)
import sys


def report(nonce, value):
    write_frame(dict(value, nonce=nonce))


def reward_of(value):
    """verl's reading of a compute_score result: a dict's "score", a tuple's first item."""
    if isinstance(value, dict):
        value = value["score"]
    elif isinstance(value, (tuple, list)):
        value = value[0]
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"the reward {score!r} is not finite")
    return score


def main():
    adopt_protocol_descriptors()
    os.dup2(2, 1)
    request = read_frame()
    nonce = request["nonce"]
    if request.get("path"):
        sys.path.insert(0, request["path"])
    try:
        function = getattr(importlib.import_module(request["module"]), request["function"])
    except BaseException as error:  # any failure to load is the target's, reported whole
        report(nonce, {"import_error": f"{type(error).__name__}: {error}"[:2000]})
        return
    report(nonce, {"ready": True})
    for case in request["cases"]:
        try:
            value = function(case["data_source"], case["solution_str"], case["ground_truth"], case["extra_info"])
            answer = {"index": case["index"], "score": reward_of(value)}
        except BaseException as error:  # the reward raised (or the program made it raise)
            answer = {"index": case["index"], "error": f"{type(error).__name__}: {error}"[:500]}
        report(nonce, answer)


main()
