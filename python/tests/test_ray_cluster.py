"""Issue 26: rlvr.ray on a real Ray cluster of three nodes, each in a network namespace of
this test's own with its own address (veth pairs on a bridge in a fourth namespace, addresses
in 198.18.26.0/24, the benchmarking range, which exists only inside these namespaces), joined
with `ray start --head` / `ray start --address`. Each node also has its own PID namespace
(`unshare --pid --kill-child`), so that killing the node's `unshare` ends every process of
that node and nothing else.

The driver (ray_cluster_driver.py, in the head's namespace) starts one verifier per node,
spreads batches over them, and, mid-batch, (1) kills one node's `rlvr serve` with SIGKILL and
(2) kills a whole node; the jobs those verifiers had not finished are scored on the others,
and every job has exactly one result. Needs root (ip netns), as CI has; fails otherwise.
Cost: about a minute (three Ray nodes start, a node's death is noticed by Ray's health check).
"""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import PYTHON_DIRECTORY

pytest.importorskip("ray")

TESTS = Path(__file__).resolve().parent
SUBNET = "198.18.26"
NODES = 3


def ip(*arguments):
    completed = subprocess.run(["ip", *arguments], capture_output=True, text=True)
    assert completed.returncode == 0, f"ip {' '.join(arguments)}: {completed.stderr}"


class Cluster:
    """Namespaces, links and Ray nodes this test made, removed by `close()` (by name and pid)."""

    def __init__(self):
        tag = f"{os.getpid() % 100000}"
        self.switch = f"rlvr{tag}sw"
        self.namespaces = [f"rlvr{tag}n{index}" for index in range(NODES)]
        self.addresses = [f"{SUBNET}.{index + 1}" for index in range(NODES)]
        self.nodes = []  # Popen of each node's `unshare`
        # Ray's token authentication, one token for this cluster (nodes and driver).
        self.token = secrets.token_hex(32)
        self.temp = Path(f"/tmp/rr{tag}")
        self.made = []
        ip("netns", "add", self.switch)
        self.made.append(self.switch)
        ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        ip("-n", self.switch, "link", "set", "br0", "up")
        for index, (namespace, address) in enumerate(zip(self.namespaces, self.addresses)):
            ip("netns", "add", namespace)
            self.made.append(namespace)
            inner, outer = f"r{tag}i{index}", f"r{tag}o{index}"
            ip("link", "add", inner, "type", "veth", "peer", "name", outer)
            ip("link", "set", inner, "netns", namespace)
            ip("link", "set", outer, "netns", self.switch)
            ip("-n", namespace, "link", "set", "lo", "up")
            ip("-n", namespace, "addr", "add", f"{address}/24", "dev", inner)
            ip("-n", namespace, "link", "set", inner, "up")
            ip("-n", self.switch, "link", "set", outer, "master", "br0")
            ip("-n", self.switch, "link", "set", outer, "up")

    def environment(self):
        return dict(
            os.environ,
            PYTHONPATH=str(PYTHON_DIRECTORY),
            RAY_USAGE_STATS_ENABLED="0",
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN=self.token,
            RLVR_BIN=os.environ["RLVR_BIN"],
        )

    def start_node(self, index):
        ray_start = [sys.executable, "-m", "ray.scripts.scripts", "start", "--block", f"--node-ip-address={self.addresses[index]}",
                     "--num-cpus=1", "--disable-usage-stats", f"--temp-dir={self.temp}"]
        if index == 0:
            ray_start += ["--head", "--port=6379", "--include-dashboard=false"]
        else:
            ray_start += [f"--address={self.addresses[0]}:6379"]
        command = ["ip", "netns", "exec", self.namespaces[index], "unshare", "--pid", "--fork", "--kill-child", "--mount-proc", *ray_start]
        # Ray gives a starting node 30 s (hard-coded) to register; on a loaded 2-core machine a
        # raylet can miss that, and `ray start` exits: the node is started again (3 tries).
        for attempt in range(3):
            log_path = self.temp / f"node{index}-{attempt}.log"
            with open(log_path, "w") as log:
                node = subprocess.Popen(command, env=self.environment(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + 180
            while node.poll() is None and "Ray runtime started" not in log_path.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            if node.poll() is None and "Ray runtime started" in log_path.read_text():
                self.nodes.append(node)
                return
            if node.poll() is None:
                node.kill()
            node.wait()
        raise AssertionError(f"Ray node {index} did not start: {log_path.read_text()[-3000:]}")

    def init_pid(self, index):
        """The host pid of the node's PID-namespace init (the `unshare` child)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            children = subprocess.run(["pgrep", "-P", str(self.nodes[index].pid)], capture_output=True, text=True).stdout.split()
            if children:
                return int(children[0])
            time.sleep(0.05)
        raise AssertionError(f"node {index} has no init process")

    def close(self):
        for node in self.nodes:
            if node.poll() is None:
                node.send_signal(signal.SIGKILL)  # --kill-child: the whole node's PID namespace ends
            node.wait(timeout=60)
        for namespace in reversed(self.made):
            subprocess.run(["ip", "netns", "delete", namespace], capture_output=True)
        shutil.rmtree(self.temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        pytest.fail("the multi-node Ray test makes network namespaces: run it as root (CI does)")
    cluster = Cluster()
    try:
        cluster.temp.mkdir(exist_ok=True)
        cluster.start_node(0)
        yield cluster
    finally:
        cluster.close()


def test_issue26_rlvr_ray_on_three_nodes_survives_a_lost_verifier_and_a_lost_node(cluster):
    # Nodes 1 and 2 join once the head runs, one after the other.
    for index in range(1, NODES):
        cluster.start_node(index)
    request = {
        "head": f"{cluster.addresses[0]}:6379",
        "addresses": cluster.addresses,
        # nsenter into a node's PID namespace kills its rlvr serve by its pid there.
        "node_0_init": cluster.init_pid(0),
        "node_1_init": cluster.init_pid(1),
        # node 2's `unshare`: killing it ends the whole node.
        "node_2_unshare": cluster.nodes[2].pid,
    }
    completed = subprocess.run(
        ["ip", "netns", "exec", cluster.namespaces[0], sys.executable, str(TESTS / "ray_cluster_driver.py"), json.dumps(request)],
        env=cluster.environment(), capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-6000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])

    # One verifier per node, each bound to its own node's address.
    assert sorted(report["verifier_hosts"]) == sorted(cluster.addresses)
    assert len(set(report["verifier_nodes"])) == NODES
    # A healthy batch: spread over all three nodes, right scores in job order.
    assert report["healthy"]["scores"] == report["healthy"]["expected"]
    assert report["healthy"]["ids"] == list(range(len(report["healthy"]["expected"])))
    assert all(count > 0 for count in report["healthy"]["per_node"]), report["healthy"]["per_node"]
    assert sum(report["healthy"]["per_node"]) == len(report["healthy"]["expected"])
    assert report["http_across_nodes"] == [1.0, 0.0, 1.0]

    for case in ("server_killed", "node_killed"):
        outcome = report[case]
        assert outcome["ids"] == list(range(outcome["jobs"])), f"{case}: one result per job, none lost or doubled"
        assert outcome["scores"] == outcome["expected"], case
        assert outcome["victim_had_finished"] >= 1, f"{case}: the kill came mid-batch"
        assert outcome["victim_had_finished"] < outcome["victim_share"], f"{case}: with work left on the victim"
        [failure] = outcome["new_failures"]
        assert failure["node_id"] == outcome["victim_node"], case
    assert "VerifierDown" in report["server_killed"]["new_failures"][0]["error"]
    # Ray reports a lost node's actor as unavailable (its connection closed) or dead (once
    # its health check gave up), whichever comes first: both are RayActorError.
    assert report["node_killed"]["new_failures"][0]["error"].startswith(("ActorUnavailableError", "ActorDiedError")), report["node_killed"]
    assert report["verifiers_left"] == 1
    assert report["lost_when_none_left"].startswith("VerifierLost")
