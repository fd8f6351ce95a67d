"""rlvr.ray on a local multi-node cluster (ray.cluster_utils.Cluster, two nodes on one
address): one verifier per node, pinned there, a batch spread across them, nothing left after
shutdown. Nodes with their own addresses, and verifiers lost mid-batch: test_ray_cluster.py."""

import os
import subprocess
import time

import pytest

from conftest import DOUBLING, RIGHT, WRONG

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    # Workers import rlvr from this checkout (an installed package needs no PYTHONPATH).
    from conftest import PYTHON_DIRECTORY

    environment = {"RLVR_BIN": os.environ["RLVR_BIN"], "PYTHONPATH": str(PYTHON_DIRECTORY)}
    ray.init(address=cluster.address, runtime_env={"env_vars": environment})
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def _serve_processes():
    output = subprocess.run(["pgrep", "-f", f"{os.environ['RLVR_BIN']} serve"], capture_output=True, text=True).stdout
    return {int(pid) for pid in output.split()}


def test_one_verifier_per_node_and_a_batch_sharded_across_them(cluster):
    import rlvr.ray

    pool = rlvr.ray.start_verifiers(workers=1)
    nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    assert len(nodes) == 2
    assert {description["node_id"] for description in pool.descriptions} == nodes, "one per node"

    jobs = [{"response": RIGHT if index % 3 else WRONG, "ground_truth": DOUBLING} for index in range(12)]
    results = pool.verify(jobs)
    assert [result["score"] for result in results] == [0.0 if index % 3 == 0 else 1.0 for index in range(12)]
    assert [result["id"] for result in results] == list(range(12))
    finished = ray.get([actor.jobs_finished.remote() for actor in pool.actors])
    assert sum(finished) == 12 and all(count > 0 for count in finished), f"both nodes scored chunks: {finished}"

    with pool.client() as client:
        assert [result["score"] for result in client.verify(jobs[:4])] == [0.0, 1.0, 1.0, 0.0]

    servers = {description["pid"] for description in pool.descriptions}
    assert servers <= _serve_processes()
    pool.shutdown()
    deadline = time.monotonic() + 30
    while servers & _serve_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not servers & _serve_processes(), "every node's rlvr serve stopped"
