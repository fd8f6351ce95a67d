"""rlvr.Client: local server lifecycle, sync and async batches, sharding, retries, deadlines."""

import asyncio
import http.server
import json
import logging
import os
import socket
import threading
import time

import pytest

import rlvr
import rlvr.verl
from conftest import DOUBLING, RIGHT, WRONG


def test_local_server_starts_on_a_free_port_and_stops_on_close():
    client = rlvr.Client(None, workers=1)
    process = client.server.process
    assert client.urls[0].startswith("http://127.0.0.1:")
    assert client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])[0]["score"] == 1.0
    client.close()
    assert process.poll() == 0, "SIGTERM ends the server cleanly"



def test_a_local_servers_log_goes_to_the_file_asked_for(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text("an earlier line\n")
    with rlvr.Client(None, workers=1, server_log=str(log)) as client:
        assert client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])[0]["score"] == 1.0
    text = log.read_text()
    assert text.startswith("an earlier line\n"), "appended, not truncated"
    assert "rlvr serve: listening on " + client.urls[0] in text
    assert "stopped after finishing every request in flight" in text

def test_sync_batch_keeps_job_order_and_ids(client):
    jobs = [{"id": f"job-{index}", "response": RIGHT if index % 2 == 0 else WRONG, "ground_truth": DOUBLING} for index in range(10)]
    results = client.verify(jobs, details=True)
    assert [result["id"] for result in results] == [job["id"] for job in jobs]
    assert [result["score"] for result in results] == [1.0, 0.0] * 5
    assert results[1]["tests"][0]["verdict"] == "wrong_answer"


def test_async_batch_runs_on_an_event_loop(client):
    jobs = [{"response": RIGHT, "ground_truth": json.dumps(DOUBLING)} for _ in range(6)]

    async def main():
        return await asyncio.gather(client.averify(jobs[:3]), client.averify(jobs[3:], profile="prime"))

    first, second = asyncio.run(main())
    assert [result["score"] for result in first + second] == [1.0] * 6
    assert second[0]["profile"] == "prime"


def test_batches_are_sharded_over_every_url(serve):
    servers = [serve(), serve()]
    client = rlvr.Client([server.url for server in servers], max_batch=4)
    jobs = [{"response": RIGHT if index < 7 else WRONG, "ground_truth": DOUBLING} for index in range(10)]
    results = client.verify(jobs)
    assert [result["score"] for result in results] == [1.0] * 7 + [0.0] * 3
    finished = [_metric(client, index, "rlvr_jobs_total") for index in range(2)]
    assert all(count >= 3 for count in finished) and sum(finished) == 10, finished
    client.close()


def test_a_dead_url_fails_over_to_a_live_one(url):
    client = rlvr.Client(["http://127.0.0.1:9", url], deadline=30)
    results = client.verify([{"response": RIGHT, "ground_truth": DOUBLING}] * 4)
    assert [result["score"] for result in results] == [1.0] * 4
    client.close()


class _Flaky(http.server.BaseHTTPRequestHandler):
    """429 with Retry-After, then 503, then forwards to the real server."""

    answers = []
    target = ""

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.answers:
            status = self.answers.pop(0)
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "1")
            self.end_headers()
            self.wfile.write(b'{"error": "busy"}')
            return
        import urllib.request

        request = urllib.request.Request(self.target + self.path, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            payload = response.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *arguments):
        pass


def _stub(answers, target):
    handler = type("Handler", (_Flaky,), {"answers": list(answers), "target": target})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_429_and_5xx_are_retried_honouring_retry_after(url):
    stub = _stub([429, 503, 500], url)
    client = rlvr.Client(f"http://127.0.0.1:{stub.server_port}", deadline=60)
    started = time.monotonic()
    results = client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])
    assert results[0]["score"] == 1.0
    assert time.monotonic() - started >= 1.0, "waited for Retry-After"
    client.close()
    stub.shutdown()


def test_retries_stop_at_the_deadline_and_4xx_raises_at_once(url):
    stub = _stub([503] * 1000, url)
    client = rlvr.Client(f"http://127.0.0.1:{stub.server_port}", deadline=1.5)
    started = time.monotonic()
    with pytest.raises(rlvr.VerifyError, match="deadline passed"):
        client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])
    assert time.monotonic() - started < 10
    client.close()
    stub.shutdown()
    real = rlvr.Client(url)
    with pytest.raises(rlvr.VerifyError) as refused:
        real.verify([{"response": RIGHT, "ground_truth": DOUBLING}], profile="no-such-profile")
    assert refused.value.status == 400 and "unknown profile" in str(refused.value)
    real.close()


def test_a_full_server_queue_is_absorbed_by_retries(serve):
    server = serve("--max-queue", "2")
    client = rlvr.Client(server.url, max_batch=2, max_concurrent_requests=8, deadline=120)
    slow = "```python\nimport time\ntime.sleep(0.2)\nprint(int(input()) * 2)\n```"
    results = client.verify([{"response": slow, "ground_truth": DOUBLING}] * 12)
    assert [result["score"] for result in results] == [1.0] * 12
    assert _metric(client, 0, "rlvr_queue_full_total") >= 1
    client.close()


def _metric(client, index, name):
    for line in client.metrics(index).splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} missing")


def test_binary_is_found_through_rlvr_bin():
    assert rlvr.find_binary() == os.environ["RLVR_BIN"]


# -- failing fast (issue 34): a dead, silent or dying server is an error naming the URL ----------

def _closed_port() -> int:
    """A port nothing listens on (bound, then closed: the kernel refuses connections to it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_closed_port_is_an_error_naming_the_url_within_the_connect_timeout(caplog):
    url = f"http://127.0.0.1:{_closed_port()}"
    client = rlvr.Client(url, connect_timeout=2, deadline=600)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="rlvr.client"), pytest.raises(rlvr.VerifyError) as failure:
        client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])
    elapsed = time.monotonic() - started
    assert elapsed < 2 + 1, f"gave up after {elapsed:.1f} s, not within the 2 s connect timeout"
    message = str(failure.value)
    assert f"cannot connect to the rlvr server at {url}" in message and "connection refused" in message, message
    retries = [record.getMessage() for record in caplog.records if record.name == "rlvr.client"]
    assert retries and all("connection refused" in line and url in line for line in retries), retries
    client.close()


def test_a_port_that_accepts_and_never_answers_is_an_error_at_the_budget():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # the kernel completes the handshake; nothing ever reads or answers
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        client = rlvr.Client(url, connect_timeout=1, deadline=2)
        started = time.monotonic()
        with pytest.raises(rlvr.VerifyError) as failure:
            client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])
        elapsed = time.monotonic() - started
        client.close()
    assert 2 - 0.1 <= elapsed < 2 + 1.5, f"{elapsed:.1f} s for a 2 s budget"
    message = str(failure.value)
    assert message.startswith(f"{url}/v1/verify: deadline passed"), message
    assert "accepted the connection but sent no answer" in message, message


def test_a_server_that_dies_mid_request_is_an_error_naming_both_causes(caplog):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"

    def die_mid_request():
        connection, _ = listener.accept()
        connection.recv(65536)  # the request's first bytes arrived: the server "crashes"
        listener.close()
        connection.close()

    server = threading.Thread(target=die_mid_request)
    server.start()
    client = rlvr.Client(url, connect_timeout=2, deadline=600)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="rlvr.client"), pytest.raises(rlvr.VerifyError) as failure:
        client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])
    elapsed = time.monotonic() - started
    server.join()
    client.close()
    assert elapsed < 2 + 1, f"{elapsed:.1f} s"
    assert "connection refused" in str(failure.value) and url in str(failure.value), str(failure.value)
    retries = [record.getMessage() for record in caplog.records if record.name == "rlvr.client"]
    assert "closed the connection mid-request" in retries[0], retries


def test_a_dead_rlvr_url_fails_the_adapters_within_seconds(monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("RLVR_URL", url)
    monkeypatch.setenv("RLVR_CONNECT_TIMEOUT", "1.5")
    monkeypatch.setattr(rlvr.client, "_default_client", None)

    started = time.monotonic()
    with pytest.raises(rlvr.VerifyError) as failure:
        rlvr.verl.compute_score("codecontests", RIGHT, DOUBLING)
    assert time.monotonic() - started < 1.5 + 1
    assert url in str(failure.value) and f"$RLVR_URL is '{url}'" in str(failure.value)
    rlvr.client._default_client.close()


def test_the_budget_comes_from_the_environment_and_is_checked(monkeypatch):
    monkeypatch.setenv("RLVR_DEADLINE", "42")
    monkeypatch.setenv("RLVR_CONNECT_TIMEOUT", "3")
    client = rlvr.Client("http://127.0.0.1:1")
    assert (client.deadline, client.connect_timeout) == (42.0, 3.0)
    assert rlvr.Client("http://127.0.0.1:1", deadline=5).deadline == 5.0, "the argument wins"
    monkeypatch.setenv("RLVR_DEADLINE", "soon")
    with pytest.raises(ValueError, match=r"\$RLVR_DEADLINE must be a number of seconds, not 'soon'"):
        rlvr.Client("http://127.0.0.1:1")
    with pytest.raises(ValueError, match="connect_timeout must be a positive number"):
        rlvr.Client("http://127.0.0.1:1", deadline=1, connect_timeout=0)


def test_issue34_a_body_past_the_servers_limit_is_a_413_at_once_on_every_transport(serve, caplog):
    """The thread client (`verify`, `averify`, `get_reward`) and the event-loop one
    (`averify_on_loop`) against a real `rlvr serve --max-body-bytes 4096`: a 2 MB body overflows
    the socket buffers, so the server's 413 comes while the body is still being sent. Each raises
    `VerifyError(status=413)` naming the flag, after one attempt, well inside its budget."""
    server = serve("--max-body-bytes", "4096")
    too_large = {"inputs": ["2\n" + " " * 2_000_000], "outputs": ["4\n"]}
    client = rlvr.Client(server.url, deadline=120)
    calls = {
        "verify": lambda: client.verify([{"response": RIGHT, "ground_truth": too_large}]),
        "averify": lambda: asyncio.run(client.averify([{"response": RIGHT, "ground_truth": too_large}])),
        "averify_on_loop": lambda: asyncio.run(client.averify_on_loop([{"response": RIGHT, "ground_truth": too_large}])),
        "get_reward": lambda: client.get_reward([RIGHT], ["prompt"], [too_large]),
    }
    with client:
        # Three times each: whether the server's answer or its reset reaches the client first
        # varies from one attempt to the next.
        for name, call in [item for item in calls.items() for _ in range(3)]:
            caplog.clear()
            started = time.monotonic()
            with pytest.raises(rlvr.VerifyError) as refused:
                call()
            assert refused.value.status == 413 and "--max-body-bytes" in str(refused.value), (name, refused.value)
            assert time.monotonic() - started < 20, f"{name}: a refusal, not retries until the deadline"
            assert not [record.getMessage() for record in caplog.records if "retrying" in record.getMessage()], name
        # The control: a body under the limit is scored by the same server.
        assert client.verify([{"response": RIGHT, "ground_truth": DOUBLING}])[0]["score"] == 1.0
