"""Coalescing concurrent per-sample calls on one event loop into batch requests.

verl's reward loop (0.7.1+) awaits the reward function once per sample, hundreds at a time on
one event loop. A `Batcher` gathers the jobs those calls submit during a short window (or until
`size` jobs wait), sends them as one `/v1/verify` request on the loop itself
(`Client.averify_on_loop`: no thread), and hands each awaiting call its own result, or the
batch's error. A batch the server refuses as too large (413, past its `--max-body-bytes`) is sent again
in halves. A call that is cancelled leaves its batch alone: the others still get theirs.
A batch that has been sent is not cancelled with its callers: it finishes and its results
are dropped for the callers that left.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any, Dict, List, Optional, Set, Tuple

from rlvr.client import Client, VerifyError

DEFAULT_WINDOW = 0.01
"""Seconds a batch stays open after its first job: verl's workers decode each response in a
thread before calling, so a step's samples arrive over a few milliseconds, not at once."""
DEFAULT_SIZE = 32
"""Jobs past which a batch is sent at once, without waiting for the window. Several batches in
flight rather than one large one: the server prepares a request's jobs one after another
(parsing, dataset rows), so separate requests keep all its cores busy (BENCHMARKS.md)."""


class Batcher:
    """Jobs for one client with one set of options, on one event loop."""

    def __init__(self, client: Client, options: Dict[str, Any], window: float, size: int) -> None:
        if not window >= 0:
            raise ValueError(f"batch_window must be a number of seconds >= 0, not {window!r}")
        if size < 1:
            raise ValueError(f"batch_size must be at least 1, not {size!r}")
        self.client = client
        self.options = options
        self.window = window
        self.size = size
        self.waiting: List[Tuple[Dict[str, Any], asyncio.Future]] = []
        self.timer: Optional[asyncio.TimerHandle] = None
        self.sending: Set[asyncio.Task] = set()
        self.requests = 0
        """Batches sent so far (what the tests count)."""

    async def score(self, job: Dict[str, Any]) -> Dict[str, Any]:
        """The result of one job, sent with the other jobs submitted within the window."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.waiting.append((job, future))
        if len(self.waiting) >= self.size:
            self.flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.window, self.flush)
        return await future

    def flush(self) -> None:
        """Sends the waiting jobs (those whose callers still wait) as one batch."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch = [(job, future) for job, future in self.waiting if not future.done()]
        self.waiting = []
        if not batch:
            return
        self.requests += 1
        task = asyncio.get_running_loop().create_task(self._send(batch))
        # The loop keeps only weak references to tasks: hold this one until it is done.
        self.sending.add(task)
        task.add_done_callback(self.sending.discard)

    async def _send(self, batch: List[Tuple[Dict[str, Any], asyncio.Future]]) -> None:
        try:
            results = await self.client.averify_on_loop([job for job, _ in batch], **self.options)
        except VerifyError as error:
            if error.status == 413 and len(batch) > 1:
                # Past the server's --max-body-bytes together (records with megabytes of
                # tests): each half on its own, down to single jobs, whose 413 is theirs.
                middle = len(batch) // 2
                await asyncio.gather(self._send(batch[:middle]), self._send(batch[middle:]))
                return
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        except Exception as error:
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        except BaseException:  # the loop is shutting down: nobody gets a result
            for _, future in batch:
                future.cancel()
            raise
        for (_, future), result in zip(batch, results):
            if not future.done():
                future.set_result(result)


_batchers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Dict[Tuple[int, str], Batcher]]" = weakref.WeakKeyDictionary()


def batcher_for(client: Client, options: Dict[str, Any], window: float = DEFAULT_WINDOW, size: int = DEFAULT_SIZE) -> Batcher:
    """The running loop's batcher for this client, options, window and size (created on first use)."""
    loop = asyncio.get_running_loop()
    key = (id(client), json.dumps([options, window, size], sort_keys=True, default=str))
    batchers = _batchers.setdefault(loop, {})
    batcher = batchers.get(key)
    if batcher is None or batcher.client is not client:
        batcher = batchers[key] = Batcher(client, dict(options), window, size)
    return batcher
