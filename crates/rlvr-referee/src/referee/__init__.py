"""rlvr referee: the trusted side of the judge's functional tests (docs/profiles.md, "Threat model").

It runs each test's code whole, with the prelude's names, its own helpers and builtins; every
name the solution defines is a stand-in whose calls go, one at a time, to the solution's child
(runner/live.py) through the engine, which relays the messages. It never runs the solution. It
runs in its own sandbox, one per worker, and forks a process per job. The package
`rlvr_referee` (these modules and the runner's `protocol` and `codec`) is started by the runner's
bootstrap, which imports it from memory and calls `main.main()`.

Frames on descriptors 3 (requests) and 4 (responses), as the runner's: a 4-byte little-endian
length, a JSON header, raw payloads. Requests:

  start {"op":"start","prelude":n}                    + prelude source        -> {"ok":bool}
  open  {"op":"open","tests":[n,...]}                 + test sources          -> {"ok":true}
  test  {"op":"test","test":i}      runs test i; meanwhile the referee writes {"op":"send","size":n}
        + a message for the child, and reads {"op":"message","size":n} + the child's message or
        {"op":"ended","reason":str}; it ends with
        {"op":"verdict","outcome":"pass"|"fail"|"error"|"ended","detail":str,"untrusted_comparisons":n}
  close {"op":"close"}                                                        -> {"ok":true}
  exit  {"op":"exit"}
"""
