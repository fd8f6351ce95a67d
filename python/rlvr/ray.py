"""One verifier per Ray node, and a batch sharded across them.

`start_verifiers()` places one actor on every alive node that has CPUs, pinned with
`NodeAffinitySchedulingStrategy(soft=False)`. Each actor owns a local `rlvr serve` (bound to
the node's address with a random bearer token, killed with the actor). `VerifierPool.verify`
cuts a batch into one shard per node and scores the shards in parallel, each on its own
node's verifier; `VerifierPool.client()` gives an HTTP client over all nodes' URLs instead.

    import ray, rlvr.ray
    ray.init(address="auto")
    pool = rlvr.ray.start_verifiers()
    results = pool.verify(jobs, profile="judge")
    pool.shutdown()
"""

from __future__ import annotations

import os
import secrets
import tempfile
from typing import Any, Dict, List, Optional, Sequence

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from rlvr._binary import find_binary
from rlvr._local import LocalServer
from rlvr.client import Client, _split


@ray.remote(num_cpus=0)
class Verifier:
    """Owns one `rlvr serve` on its node."""

    def __init__(self, binary: str, workers: Optional[int], bind_loopback: bool, token: str) -> None:
        self.node_id = ray.get_runtime_context().get_node_id()
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

    def describe(self) -> Dict[str, Any]:
        return {"node_id": self.node_id, "url": self.server.url, "pid": self.server.pid}

    def verify(self, jobs: List[Dict[str, Any]], options: Dict[str, Any]) -> List[Dict[str, Any]]:
        return self.client.verify(jobs, **options)

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

    def __init__(self, actors: List[Any], descriptions: List[Dict[str, Any]], token: str) -> None:
        self.actors = actors
        self.descriptions = descriptions
        self.token = token

    @property
    def urls(self) -> List[str]:
        return [description["url"] for description in self.descriptions]

    def client(self, **options: Any) -> Client:
        """An HTTP client sharding over every node's verifier (the nodes must reach each other)."""
        return Client(self.urls, token=self.token, **options)

    def verify(self, jobs: Sequence[Dict[str, Any]], **options: Any) -> List[Dict[str, Any]]:
        """Scores `jobs`: one contiguous shard per node, in parallel; results in job order."""
        shards = _split(len(jobs), len(self.actors))
        pending = [
            actor.verify.remote([dict(jobs[position], id=position) for position in shard], options)
            for actor, shard in zip(self.actors, shards)
        ]
        results: List[Dict[str, Any]] = []
        for shard_results in ray.get(pending):
            results.extend(shard_results)
        return results

    def shutdown(self) -> None:
        ray.get([actor.stop.remote() for actor in self.actors])
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


def start_verifiers(
    workers: Optional[int] = None,
    binary: Optional[str] = None,
    bind_loopback: bool = False,
) -> VerifierPool:
    """One `Verifier` per alive node with CPUs. `workers`: engine workers per node (default:
    the node's cores). `bind_loopback`: listen on 127.0.0.1 (only `VerifierPool.verify`, which
    goes through the actors, can then be used)."""
    binary = find_binary(binary)
    token = secrets.token_hex(16)
    nodes = [node for node in ray.nodes() if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0]
    if not nodes:
        raise RuntimeError("no alive Ray node with CPUs")
    actors = [
        Verifier.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
        ).remote(binary, workers, bind_loopback, token)
        for node in nodes
    ]
    descriptions = ray.get([actor.describe.remote() for actor in actors])
    return VerifierPool(actors, descriptions, token)
