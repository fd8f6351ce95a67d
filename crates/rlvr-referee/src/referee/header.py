"""rlvr referee: the trusted side of the judge's functional tests (docs/profiles.md, "Threat model").

It never runs the solution. For each test it splits the assert with `ast` into the solution's
calls (probes, run by the test child next to the solution) and the rest (the expected side,
which stays here), runs the test's setup, and after the child reported the probes' values as
plain data, finishes the test with the prelude's own helpers and builtins. It runs in its own
sandbox, one per worker, and forks a process per job.

Frames on descriptors 3 (requests) and 4 (responses), as the runner's: a 4-byte little-endian
length, a JSON header, raw payloads. Requests:

  start {"op":"start","prelude":n}                      + prelude source
  open  {"op":"open","solution":n,"tests":[n,...]}       + solution source + test sources
        -> {"tests":[{"split":true,"probes":n} | {"split":false,"reason":str}, ...]}
           + one probe spec per split test
  judge {"op":"judge","test":i,"results":n}              + the child's results file
        -> {"outcome":"pass"|"fail"|"error","detail":str,"forged":bool}
  close {"op":"close"}                                   -> {"ok":true}, the job process exits
  exit  {"op":"exit"}
"""

import ast
import builtins
import collections
import gc
import itertools
import json
import os
import select
import signal
import struct
import sys
import time
import types

