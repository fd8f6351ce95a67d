"""rlvr: code rewards for RL with verifiable rewards, served by the `rlvr` binary.

`Client` talks to one or more `rlvr serve` URLs (or starts a local one); the adapters in
`rlvr.verl`, `rlvr.trl` and `rlvr.openrlhf` have the exact signatures those trainers call;
`rlvr.ray` runs one verifier per Ray node; `rlvr.ground_truth` finds the tests in any shape a
trainer passes (label, ground_truth, metadata.ground_truth, nulls, numpy).
"""

from rlvr._binary import find_binary
from rlvr.client import Client, VerifyError, start_server
from rlvr.ground_truth import GroundTruthError, tests_of

__all__ = ["Client", "GroundTruthError", "VerifyError", "find_binary", "start_server", "tests_of"]
__version__ = "0.1.0"
