"""rlvr: code rewards for RL with verifiable rewards, served by the `rlvr` binary.

`Client` talks to one or more `rlvr serve` URLs (or starts a local one); the adapters in
`rlvr.verl`, `rlvr.trl` and `rlvr.openrlhf` have the exact signatures those trainers call;
`rlvr.ray` runs one verifier per Ray node.
"""

from rlvr._binary import find_binary
from rlvr.client import Client, VerifyError

__all__ = ["Client", "VerifyError", "find_binary"]
__version__ = "0.1.0"
