"""One verifier per Ray node, and a batch spread across them.

`start_verifiers()` places one actor on every alive node that has CPUs, pinned with
`NodeAffinitySchedulingStrategy(soft=False)`. Each actor owns a local `rlvr serve` (bound to
the node's address with a random bearer token, killed with the actor). `VerifierPool.verify`
cuts a batch into contiguous chunks (`chunks_per_verifier` per verifier) and hands them to the
verifiers as they free up; results come back in job order, exactly one per job.

Each verifier finds the `rlvr` binary on its own node (`RLVR_BIN` in the environment of that
node's `ray start`, else the wheel installed there), never the driver's path; its `rlvr serve`
runs with that node's `RLVR_PYTHON`.

Failures: a verifier whose node died, whose actor died or whose `rlvr serve` exited is
dropped from the pool (and killed), and the chunk it was scoring goes back to the queue for
another verifier; chunks it had finished are kept. When its node is still alive, a new
verifier is started on that node and takes its place (`replace_lost=True`, the default;
`pool.replacements` records each), so a crash of one server does not shrink the pool. A chunk is tried at most `max_attempts`
times; with no verifier left, `verify` raises `VerifierLost` naming every failure. A chunk
refused by the server (a 4xx: bad options) raises at once, as it would anywhere.
`VerifierPool.client()` gives an HTTP client over all nodes' URLs instead.

    import ray, rlvr.ray
    ray.init(address="auto")
    pool = rlvr.ray.start_verifiers()
    results = pool.verify(jobs, profile="judge")
    pool.shutdown()
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import secrets
import tempfile
from typing import Any, Deque, Dict, List, Optional, Sequence, Tuple

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from rlvr._binary import find_binary
from rlvr._local import LocalServer
from rlvr.client import Client, _split


class VerifierDown(RuntimeError):
    """The verifier's `rlvr serve` exited while it was scoring."""


class VerifierLost(RuntimeError):
    """No verifier is left to score a batch, or a chunk failed `max_attempts` times."""


@ray.remote(num_cpus=0)
class Verifier:
    """Owns one `rlvr serve` on its node."""

    def __init__(self, binary: Optional[str], workers: Optional[int], bind_loopback: bool, token: str) -> None:
        self.node_id = ray.get_runtime_context().get_node_id()
        # Resolved here, on this node: the driver's path may not exist on it.
        binary = find_binary(binary)
        self.binary = binary
        host = "127.0.0.1" if bind_loopback else ray.util.get_node_ip_address()
        handle, self.token_file = tempfile.mkstemp(prefix="rlvr-token-")
        with os.fdopen(handle, "w") as file:
            file.write(token)
        self.server = LocalServer(
            binary=binary,
            workers=workers,
            address=f"{host}:0",
            token_file=self.token_file,
            parent_death_signal=True,
        )
        self.client = Client(self.server.url, token=token)
        self.calls = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rlvr-verifier")

    def describe(self) -> Dict[str, Any]:
        return {"node_id": self.node_id, "url": self.server.url, "pid": self.server.pid, "actor_pid": os.getpid(),
                "binary": self.binary, "python": os.environ.get("RLVR_PYTHON")}

    def verify(self, jobs: List[Dict[str, Any]], options: Dict[str, Any]) -> List[Dict[str, Any]]:
        # The client retries connection errors until its deadline; a server that exited will
        # not come back, so its exit ends the call at once (the pool then retries elsewhere).
        call = self.calls.submit(self.client.verify, jobs, **options)
        while True:
            try:
                return call.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if not self.server.alive():
                    raise VerifierDown(
                        f"rlvr serve (pid {self.server.pid}) on node {self.node_id} exited with status "
                        f"{self.server.process.poll()} during a chunk of {len(jobs)} jobs"
                    ) from None

    def jobs_finished(self) -> float:
        for line in self.client.metrics().splitlines():
            if line.startswith("rlvr_jobs_total "):
                return float(line.split()[1])
        return 0.0

    def stop(self) -> bool:
        self.client.close()
        self.server.stop()
        os.unlink(self.token_file)
        return True


class VerifierPool:
    """The verifiers of a cluster."""

    def __init__(self, actors: List[Any], descriptions: List[Dict[str, Any]], token: str,
                 settings: Optional[Dict[str, Any]] = None, replace_lost: bool = False) -> None:
        self.actors = actors
        self.descriptions = descriptions
        self.token = token
        self.settings = settings or {"binary": None, "workers": None, "bind_loopback": False}
        """How each verifier was started (`binary`, `workers`, `bind_loopback`): replacements alike."""
        self.replace_lost = replace_lost
        self.failures: List[Dict[str, Any]] = []
        """Verifiers dropped from the pool: `{"node_id", "url", "error"}`, in order."""
        self.replacements: List[Dict[str, Any]] = []
        """Verifiers started in place of a failed one: `{"node_id", "old_url", "url"}`, in order."""

    @property
    def urls(self) -> List[str]:
        return [description["url"] for description in self.descriptions]

    def client(self, **options: Any) -> Client:
        """An HTTP client sharding over every node's verifier (the nodes must reach each other)."""
        return Client(self.urls, token=self.token, **options)

    def verify(
        self,
        jobs: Sequence[Dict[str, Any]],
        *,
        chunks_per_verifier: int = 4,
        max_attempts: int = 3,
        **options: Any,
    ) -> List[Dict[str, Any]]:
        """Scores `jobs` on the pool's verifiers; results in job order, one per job (`id` is
        the job's position). Chunks whose verifier failed are scored again by another."""
        if not jobs:
            return []
        if not self.actors:
            raise VerifierLost(f"no verifier left: {self.failures}")
        chunks = _split(len(jobs), len(self.actors) * max(1, chunks_per_verifier))
        queue: Deque[Tuple[range, int]] = collections.deque((chunk, 0) for chunk in chunks)
        results: List[Optional[Dict[str, Any]]] = [None] * len(jobs)
        idle = list(range(len(self.actors)))
        running: Dict[Any, Tuple[int, range, int]] = {}
        lost: set = set()
        try:
            while queue or running:
                while queue and idle:
                    index = idle.pop(0)
                    chunk, attempts = queue.popleft()
                    reference = self.actors[index].verify.remote([dict(jobs[position], id=position) for position in chunk], options)
                    running[reference] = (index, chunk, attempts)
                if not running:
                    raise VerifierLost(f"no verifier left for {sum(len(chunk) for chunk, _ in queue)} jobs: {self.failures}")
                [done], _ = ray.wait(list(running), num_returns=1)
                index, chunk, attempts = running.pop(done)
                try:
                    shard = ray.get(done)
                except (ray.exceptions.RayActorError, VerifierDown) as error:
                    self._drop(index, error)
                    if self.replace_lost and self._replace(index):
                        idle.append(index)
                    else:
                        lost.add(index)
                    if attempts + 1 >= max_attempts:
                        raise VerifierLost(f"jobs {chunk.start}..{chunk.stop - 1} failed {attempts + 1} times: {self.failures}") from error
                    queue.appendleft((chunk, attempts + 1))
                    continue
                if len(shard) != len(chunk) or any(result.get("id") != position for position, result in zip(chunk, shard)):
                    raise VerifierLost(f"verifier {self.descriptions[index]['url']} answered jobs {chunk.start}..{chunk.stop - 1} out of order")
                for position, result in zip(chunk, shard):
                    results[position] = result
                idle.append(index)
        finally:
            self._forget(lost)
        return results  # type: ignore[return-value]

    def _drop(self, index: int, error: BaseException) -> None:
        """Records a failed verifier and kills its actor (its `rlvr serve` dies with it)."""
        description = self.descriptions[index]
        self.failures.append({"node_id": description["node_id"], "url": description["url"], "error": f"{type(error).__name__}: {error}"})
        try:
            ray.kill(self.actors[index])
        except Exception:  # already gone with its node
            pass

    def _replace(self, index: int, timeout: float = 60.0) -> bool:
        """Starts a verifier on the failed one's node if that node is alive; True when it runs."""
        node_id = self.descriptions[index]["node_id"]
        if not any(node.get("NodeID") == node_id and node.get("Alive") for node in ray.nodes()):
            return False
        actor = _start_verifier(node_id, self.settings, self.token)
        try:
            [description] = ray.get([actor.describe.remote()], timeout=timeout)
        except Exception as error:  # the node died meanwhile, or the server did not start
            self.failures.append({"node_id": node_id, "url": None, "error": f"replacement failed: {type(error).__name__}: {error}"})
            try:
                ray.kill(actor)
            except Exception:
                pass
            return False
        self.replacements.append({"node_id": node_id, "old_url": self.descriptions[index]["url"], "url": description["url"]})
        self.actors[index] = actor
        self.descriptions[index] = description
        return True

    def _forget(self, lost: set) -> None:
        self.actors = [actor for index, actor in enumerate(self.actors) if index not in lost]
        self.descriptions = [description for index, description in enumerate(self.descriptions) if index not in lost]

    def shutdown(self) -> None:
        """Stops every verifier left (each `rlvr serve` finishes its requests first)."""
        for actor in self.actors:
            try:
                ray.get(actor.stop.remote())
            except ray.exceptions.RayActorError:  # died since: its server died with it
                pass
            ray.kill(actor)
        self.actors = []
        self.descriptions = []


def _start_verifier(node_id: str, settings: Dict[str, Any], token: str) -> Any:
    return Verifier.options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
    ).remote(settings["binary"], settings["workers"], settings["bind_loopback"], token)


def start_verifiers(
    workers: Optional[int] = None,
    binary: Optional[str] = None,
    bind_loopback: bool = False,
    replace_lost: bool = True,
) -> VerifierPool:
    """One `Verifier` per alive node with CPUs. `workers`: engine workers per node (default:
    the node's cores). `binary`: the path of `rlvr` on every node (default: each node finds its
    own). `bind_loopback`: listen on 127.0.0.1 (only `VerifierPool.verify`, which goes through
    the actors, can then be used). `replace_lost`: start a new verifier on a live node whose
    verifier failed."""
    token = secrets.token_hex(16)
    nodes = [node for node in ray.nodes() if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0]
    if not nodes:
        raise RuntimeError("no alive Ray node with CPUs")
    settings = {"binary": binary, "workers": workers, "bind_loopback": bind_loopback}
    actors = [_start_verifier(node["NodeID"], settings, token) for node in nodes]
    descriptions = ray.get([actor.describe.remote() for actor in actors])
    return VerifierPool(actors, descriptions, token, settings=settings, replace_lost=replace_lost)
