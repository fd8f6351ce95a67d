"""A local `rlvr serve --addr 127.0.0.1:0` subprocess: started on demand, its URL read from
the first line it prints, stopped with SIGTERM (then SIGKILL) on close, garbage collection or
interpreter exit."""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
import weakref
from typing import Optional, Sequence

from rlvr._binary import find_binary


def _stop_process(process: subprocess.Popen, grace: float = 30.0) -> None:
    if process.poll() is not None:
        return
    try:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    except ProcessLookupError:
        pass
    finally:
        if process.stdout is not None:
            process.stdout.close()


class LocalServer:
    """One `rlvr serve` owned by this Python process."""

    def __init__(
        self,
        binary: Optional[str] = None,
        workers: Optional[int] = None,
        address: str = "127.0.0.1:0",
        token_file: Optional[str] = None,
        extra_arguments: Sequence[str] = (),
        parent_death_signal: bool = False,
        startup_timeout: float = 120.0,
        log_path: Optional[str] = None,
    ) -> None:
        """`log_path`: append the server's log (its stderr) to this file instead of this
        process's stderr."""
        arguments = [find_binary(binary), "serve", "--addr", address]
        if workers:
            arguments += ["--workers", str(workers)]
        if token_file:
            arguments += ["--token-file", token_file]
        arguments += list(extra_arguments)
        log = open(log_path, "ab") if log_path else None
        try:
            self.process = subprocess.Popen(
                arguments,
                stdout=subprocess.PIPE,
                stderr=log,
                stdin=subprocess.DEVNULL,
                text=True,
                preexec_fn=_parent_death_signal if parent_death_signal else None,
            )
        finally:
            if log is not None:
                log.close()
        self.url = self._read_url(startup_timeout)
        self._finalizer = weakref.finalize(self, _stop_process, self.process)
        atexit.register(self._finalizer)

    def _read_url(self, timeout: float) -> str:
        line: list = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        first = line[0].strip() if line else ""
        if not first.startswith("http://"):
            _stop_process(self.process, grace=5.0)
            raise RuntimeError(
                f"rlvr serve did not start (exit status {self.process.poll()}, first line {first!r}); "
                "its stderr says why"
            )
        return first

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """SIGTERM: the server finishes requests in flight, then exits."""
        self._finalizer()

    def alive(self) -> bool:
        return self.process.poll() is None


def _parent_death_signal() -> None:
    """In the child before exec: SIGTERM when the thread that started us dies (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
        if os.getppid() == 1:
            os._exit(1)
    except OSError:
        pass
