"""rlvr warm runner: runs one job's tests inside one sandbox, one forked child per test.

The package `rlvr_runner`, one module per concern, which the Rust side embeds and starts inside
the sandbox as `python -I -S -c <bootstrap.py> rlvr_runner.main ...` (the bootstrap imports the
modules from memory, then calls `main.main()`). The Rust side speaks a framed protocol over the runner's original stdin (requests) and stdout (responses); both are moved
to high descriptors at start-up so that each test child gets fresh descriptors 0, 1 and 2 backed by
memory files (so `open(0)`, `sys.stdin.buffer` and `os.read(0, n)` behave as with a real file).

Frame: 4-byte little-endian length, a JSON header of that length, then the raw payloads whose
lengths the header names. Requests:

  load  {"op":"load","units":[n,...],"filename":str,"preload":[module,...],"compile_ms":int}
        + unit sources: compiles every unit once, in a child bounded by compile_ms; imports the
        preload modules once (numpy, pandas, ...)
  run   {"op":"run","stdin":n,"extra":n,"wall_ms":int,"cpu_s":int,"output_bytes":int,
         "memory_bytes":int}  + stdin bytes + extra source
        forks a child that runs the units then the extra source as `__main__` would, in a fresh
        copy of the interpreter state, and reports how it ended; judge tests add "sensor": true
        (the tamper sensor, runner/sensor.py) and "live": true (a functional test: the child
        answers the referee's calls on the live pipes, runner/live.py; "abort" ends it early)
  batch_start {"op":"batch_start","inputs":[n,...],"cpu_s":int,"output_bytes":int,"memory_bytes":int}
        + inputs: forks ONE child for a harness stage (prime, rllm), which loads the program once
  batch_next {"op":"batch_next","wall_ms":int}: the child runs the next test; reported as `run`
  batch_end  {"op":"batch_end"}: the child and everything it started are killed
  reset {"op":"reset","work_directory":str}: between jobs (a fresh tmpfs, every process killed)
  exit  {"op":"exit"}

Processes (runner/job.py): the process the sandbox starts is a template that reads request headers
only; a job's first request forks a job process, which reads the job's payloads, serves the job's
requests and exits at `reset` or `exit`; every test child is forked from the job process.

Expected outputs never enter the sandbox: the comparison happens in Rust.
"""
