"""The driver of test_ray_cluster.py, run in the head node's network namespace:

    ray_cluster_driver.py '{"head", "addresses", "node_0_init", "node_1_init", "node_2_unshare"}'

Joins the cluster, starts one verifier per node (rlvr.ray.start_verifiers), scores a healthy
batch, then kills verifiers mid-batch: node 1's `rlvr serve` (SIGKILL inside its PID
namespace), then node 2 whole (SIGKILL to its `unshare`), then the head's `rlvr serve` with
no verifier left. Prints one JSON line of what it saw; the test asserts on it."""

import json
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import ray

import rlvr.ray
from rlvr.client import Client

FENCE = "<think>\nplan\n</think>\n```python\n{}\n```"
DOUBLING = {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}


def job(index, slow=False):
    right = index % 3 != 0
    body = "print(int(input()) * 2)" if right else "print(0)"
    if slow:  # each test takes ~0.3 s, so that a kill lands mid-batch
        body = "import time\ntime.sleep(0.3)\n" + body
    return {"response": FENCE.format(body), "ground_truth": DOUBLING}, (1.0 if right else 0.0)


def wait_until(predicate, limit, what):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def jobs_finished(client):
    try:
        for line in client.metrics().splitlines():
            if line.startswith("rlvr_jobs_total "):
                return float(line.split()[1])
    except Exception:
        return None
    return 0.0


def kill_mid_batch(pool, jobs, victim_index, kill, chunks_per_verifier=4):
    """Runs pool.verify in a thread; once the victim finished a job, kill(); returns what
    came back and how far the victim had got."""
    victim = pool.descriptions[victim_index]
    metrics = Client(victim["url"], token=pool.token, deadline=5)
    failures_before = len(pool.failures)
    share = len(jobs) // len(pool.actors)
    outcome = {}

    def run():
        try:
            outcome["results"] = pool.verify(jobs, chunks_per_verifier=chunks_per_verifier)
        except Exception as error:  # the last case expects VerifierLost
            outcome["error"] = f"{type(error).__name__}: {error}"

    before = jobs_finished(metrics)  # the server's counter also holds earlier batches
    thread = threading.Thread(target=run)
    thread.start()
    finished = wait_until(lambda: ((jobs_finished(metrics) or 0) - before >= 1) and jobs_finished(metrics) - before, 120,
                          "the victim's first job of this batch")
    kill(victim)
    thread.join(300)
    assert not thread.is_alive(), "verify returned"
    outcome.update(victim_had_finished=finished, victim_share=share, victim_node=victim["node_id"],
                   new_failures=pool.failures[failures_before:])
    return outcome


def nsenter_kill(init_pid, pid):
    subprocess.run(["nsenter", "--target", str(init_pid), "--pid", "--", "kill", "-KILL", str(pid)], check=True)


def main():
    request = json.loads(sys.argv[1])
    ray.init(address=request["head"], log_to_driver=False)
    wait_until(lambda: len([node for node in ray.nodes() if node["Alive"]]) == len(request["addresses"]), 180, "three nodes")
    pool = rlvr.ray.start_verifiers(workers=1, replace_lost=False)  # losses are what this test counts
    report = {
        "verifier_hosts": [urlsplit(description["url"]).hostname for description in pool.descriptions],
        "verifier_nodes": [description["node_id"] for description in pool.descriptions],
    }
    by_host = {urlsplit(description["url"]).hostname: index for index, description in enumerate(pool.descriptions)}
    head, node_1, node_2 = (by_host[address] for address in request["addresses"])

    pairs = [job(index) for index in range(12)]
    results = pool.verify([pair[0] for pair in pairs])
    per_node = ray.get([actor.jobs_finished.remote() for actor in pool.actors])
    report["healthy"] = {"scores": [result["score"] for result in results], "expected": [pair[1] for pair in pairs],
                         "ids": [result["id"] for result in results], "per_node": per_node}
    with pool.client() as client:
        report["http_across_nodes"] = [result["score"] for result in client.verify([job(1)[0], job(3)[0], job(2)[0]])]

    def summarize(outcome, pairs):
        results = outcome.pop("results")
        outcome.update(jobs=len(pairs), ids=[result["id"] for result in results], scores=[result["score"] for result in results],
                       expected=[pair[1] for pair in pairs])
        return outcome

    # (1) node 1's rlvr serve dies: its chunk goes to the head and node 2.
    pairs = [job(index, slow=True) for index in range(24)]
    outcome = kill_mid_batch(pool, [pair[0] for pair in pairs], node_1,
                             lambda victim: nsenter_kill(request["node_1_init"], victim["pid"]))
    report["server_killed"] = summarize(outcome, pairs)

    # (2) node 2 dies whole (raylet, workers, its verifier): Ray reports the actor dead.
    by_host = {urlsplit(description["url"]).hostname: index for index, description in enumerate(pool.descriptions)}
    _head, node_2 = by_host[request["addresses"][0]], by_host[request["addresses"][2]]
    pairs = [job(index, slow=True) for index in range(16)]
    outcome = kill_mid_batch(pool, [pair[0] for pair in pairs], node_2,
                             lambda victim: subprocess.run(["kill", "-KILL", str(request["node_2_unshare"])], check=True))
    report["node_killed"] = summarize(outcome, pairs)
    report["verifiers_left"] = len(pool.actors)

    # (3) the last verifier's server dies: nothing is left to score on, and verify says so.
    pairs = [job(index, slow=True) for index in range(8)]
    outcome = kill_mid_batch(pool, [pair[0] for pair in pairs], 0,
                             lambda victim: nsenter_kill(request["node_0_init"], victim["pid"]))
    report["lost_when_none_left"] = outcome.get("error", "no error")
    pool.shutdown()
    ray.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
