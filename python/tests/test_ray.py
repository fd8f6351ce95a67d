"""rlvr.ray on a local multi-node cluster (ray.cluster_utils.Cluster, two nodes on one
address): one verifier per node, pinned there, a batch spread across them, nothing left after
shutdown. Nodes with their own addresses, and verifiers lost mid-batch: test_ray_cluster.py."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DOUBLING, RIGHT, WRONG

ray = pytest.importorskip("ray")


NODES = 3


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from ray.cluster_utils import Cluster

    # Each node finds its own binary: `RLVR_BIN` in its raylet's environment (as `ray start`
    # on that machine would have it) names a path of that node's own, which the driver's
    # environment does not (issue 34).
    nodes_directory = tmp_path_factory.mktemp("rlvr-ray-nodes")
    binaries = []
    for index in range(NODES):
        binary = nodes_directory / f"node{index}" / "rlvr"
        binary.parent.mkdir()
        binary.symlink_to(os.environ["RLVR_BIN"])
        binaries.append(str(binary))

    # The sandbox's interpreter, named differently on each node (the same file: `./` segments).
    interpreter = Path(os.environ.get("RLVR_PYTHON") or sys.executable)
    interpreters = [f"{interpreter.parent}/{'./' * index}{interpreter.name}" for index in range(NODES)]

    def node_environment(index):
        return {"RLVR_BIN": binaries[index], "RLVR_PYTHON": interpreters[index]}

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "env_vars": node_environment(0)},
    )
    for index in range(1, NODES):
        cluster.add_node(num_cpus=1, env_vars=node_environment(index))
    cluster.wait_for_nodes()
    # Workers import rlvr from this checkout (an installed package needs no PYTHONPATH).
    from conftest import PYTHON_DIRECTORY

    ray.init(address=cluster.address, runtime_env={"env_vars": {"PYTHONPATH": str(PYTHON_DIRECTORY)}})
    cluster.binaries = binaries
    cluster.interpreters = interpreters
    cluster.nodes_directory = nodes_directory
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def _serve_processes(cluster):
    output = subprocess.run(["pgrep", "-f", f"{cluster.nodes_directory}/node[0-9]+/rlvr serve"], capture_output=True, text=True).stdout
    return {int(pid) for pid in output.split()}


def test_one_verifier_per_node_and_a_batch_sharded_across_them(cluster):
    import rlvr.ray

    pool = rlvr.ray.start_verifiers(workers=1)
    nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    assert len(nodes) == NODES
    assert {description["node_id"] for description in pool.descriptions} == nodes, "one per node"
    # Each verifier ran its own node's binary with its node's interpreter setting.
    assert sorted(description["binary"] for description in pool.descriptions) == cluster.binaries
    assert sorted(description["python"] for description in pool.descriptions) == sorted(cluster.interpreters)

    jobs = [{"response": RIGHT if index % 3 else WRONG, "ground_truth": DOUBLING} for index in range(12)]
    results = pool.verify(jobs)
    assert [result["score"] for result in results] == [0.0 if index % 3 == 0 else 1.0 for index in range(12)]
    assert [result["id"] for result in results] == list(range(12))
    finished = ray.get([actor.jobs_finished.remote() for actor in pool.actors])
    assert sum(finished) == 12 and all(count > 0 for count in finished), f"every node scored chunks: {finished}"

    with pool.client() as client:
        assert [result["score"] for result in client.verify(jobs[:4])] == [0.0, 1.0, 1.0, 0.0]

    servers = {description["pid"] for description in pool.descriptions}
    assert servers <= _serve_processes(cluster)
    pool.shutdown()
    deadline = time.monotonic() + 30
    while servers & _serve_processes(cluster) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not servers & _serve_processes(cluster), "every node's rlvr serve stopped"


def _jobs_finished(client):
    for line in client.metrics().splitlines():
        if line.startswith("rlvr_jobs_total "):
            return float(line.split()[1])
    return 0.0


def test_a_dead_verifier_is_replaced_on_its_live_node_and_its_chunk_scored_elsewhere(cluster):
    """A node's `rlvr serve` killed mid-batch: its chunk is scored by the others (every job
    once, in order), and a new verifier on the same node takes its place for the next batch."""
    import signal
    import threading

    import rlvr
    import rlvr.ray

    pool = rlvr.ray.start_verifiers(workers=1)
    victim = pool.descriptions[1]
    slow = "```python\nimport time\ntime.sleep(0.2)\nprint(int(input()) * 2)\n```"
    jobs = [{"response": slow if index % 3 else WRONG, "ground_truth": DOUBLING} for index in range(24)]
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(results=pool.verify(jobs, chunks_per_verifier=2)))
    worker.start()
    # Kill once the victim is scoring (its server has a job in flight), not before.
    deadline = time.monotonic() + 120
    metrics = rlvr.Client(victim["url"], token=pool.token, deadline=5)  # the actor is busy scoring
    while _jobs_finished(metrics) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    metrics.close()
    os.kill(victim["pid"], signal.SIGKILL)
    worker.join(300)
    assert not worker.is_alive()
    results = outcome["results"]
    assert [result["id"] for result in results] == list(range(24)), "one result per job, none lost or doubled"
    assert [result["score"] for result in results] == [0.0 if index % 3 == 0 else 1.0 for index in range(24)]
    [failure] = pool.failures
    assert failure["node_id"] == victim["node_id"] and "VerifierDown" in failure["error"], failure
    [replacement] = pool.replacements
    assert replacement["node_id"] == victim["node_id"] and replacement["old_url"] == victim["url"]
    assert len(pool.actors) == NODES and pool.descriptions[1]["node_id"] == victim["node_id"]
    assert pool.descriptions[1]["pid"] != victim["pid"] and pool.descriptions[1]["binary"] == victim["binary"]
    # The replacement scores: a batch later, every node's verifier has work.
    before = ray.get([actor.jobs_finished.remote() for actor in pool.actors])
    again = pool.verify([{"response": RIGHT, "ground_truth": DOUBLING}] * 9, chunks_per_verifier=1)
    assert [result["score"] for result in again] == [1.0] * 9
    after = ray.get([actor.jobs_finished.remote() for actor in pool.actors])
    assert all(later > earlier for earlier, later in zip(before, after)), (before, after)
    pool.shutdown()
