"""Issue 34: `rlvr.verl.compute_score_async`, the reward function verl's reward loop (0.7.1+)
awaits: concurrent calls on one event loop become one batch request sent on the loop itself
(no thread per sample), with the sync function's scores and the client's errors, deadlines
and fail-fast connects. verl's own RewardLoopManager runs it in test_verl.py."""

import asyncio
import inspect
import json
import socket
import threading
import time

import pytest

import rlvr
import rlvr.verl
from conftest import DOUBLING, RELEASE_ROWS, RIGHT, WRONG, fenced, right_answer, verify_requests
from test_client import _closed_port, _stub

ROWS = [json.loads(line) for line in RELEASE_ROWS.read_text().splitlines() if line.strip()]
SLOW = fenced("import time\ntime.sleep(1.5)\nprint(int(input()) * 2)")
"""Right, after a second and a half per test: a batch that stays in flight long enough to watch."""


def call(solution, ground_truth, **kwargs):
    """One call as verl's naive reward manager makes it."""
    return rlvr.verl.compute_score_async(data_source="coder1_longcot", solution_str=solution, ground_truth=ground_truth,
                                         extra_info={"num_turns": None, "rollout_reward_scores": {}}, **kwargs)


def samples():
    """Right and wrong answers to the doubling tests and to the release's rows (io and functional)."""
    mixed = [(RIGHT, DOUBLING), (WRONG, DOUBLING)]
    for row in ROWS:
        mixed += [(right_answer(row), row["label"]), (WRONG, row["label"])]
    return mixed * 3


def test_issue34_verl_sees_a_coroutine_function_with_its_keywords():
    function = rlvr.verl.compute_score_async
    assert inspect.iscoroutinefunction(function), "verl awaits it instead of running it on its thread pool"
    parameters = inspect.signature(function).parameters
    assert list(parameters)[:4] == ["data_source", "solution_str", "ground_truth", "extra_info"]
    assert parameters["kwargs"].kind is inspect.Parameter.VAR_KEYWORD, "verl adds reward_router_address and reward_kwargs"
    import importlib.util

    # verl 0.6 loads by file path: the path-loaded module hands out the package's function.
    spec = importlib.util.spec_from_file_location("custom_module", rlvr.verl.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.compute_score_async is function


def test_issue34_concurrent_calls_are_one_request_without_a_thread_each_and_score_as_the_sync_function(client, url):
    mixed = samples()
    expected = [rlvr.verl.compute_score(data_source="coder1_longcot", solution_str=solution, ground_truth=truth, url=url)
                for solution, truth in mixed]
    assert {result["score"] for result in expected} == {0.0, 1.0}

    async def main():
        threads = threading.active_count()
        calls = [asyncio.ensure_future(call(solution, truth, url=url)) for solution, truth in mixed]
        most_threads = threads
        while not all(task.done() for task in calls):
            most_threads = max(most_threads, threading.active_count())
            await asyncio.sleep(0.005)
        return [task.result() for task in calls], threads, most_threads

    before = verify_requests(client)
    results, threads, most_threads = asyncio.run(main())
    assert results == expected
    assert most_threads == threads, f"{most_threads - threads} thread(s) started for {len(mixed)} samples"
    assert verify_requests(client) == before + 1, f"{len(mixed)} samples in one request"


def test_issue34_the_size_cap_and_the_batch_keywords(client, url):
    async def main():
        single = [call(RIGHT if index % 2 else WRONG, DOUBLING, url=url, batch_size=4) for index in range(10)]
        return await asyncio.gather(*single)

    before = verify_requests(client)
    results = asyncio.run(main())
    assert [result["score"] for result in results] == [0.0, 1.0] * 5
    assert verify_requests(client) == before + 3, "10 samples, at most 4 a request"
    batch = asyncio.run(rlvr.verl.compute_score_async(solution_strs=[RIGHT, WRONG], ground_truths=[DOUBLING, DOUBLING], url=url))
    assert [result["score"] for result in batch] == [1.0, 0.0]
    with pytest.raises(ValueError, match="same length"):
        asyncio.run(rlvr.verl.compute_score_async(solution_strs=[RIGHT], ground_truths=[], url=url))
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        asyncio.run(call(RIGHT, DOUBLING, url=url, batch_size=0))


def test_issue34_the_event_loop_runs_while_a_batch_is_verified(url):
    async def main():
        gaps = []
        request = asyncio.ensure_future(call(SLOW, DOUBLING, url=url, time_limit=10))
        last = time.monotonic()
        while not request.done():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
        return await request, gaps

    started = time.monotonic()
    result, gaps = asyncio.run(main())
    elapsed = time.monotonic() - started
    assert result["score"] == 1.0 and elapsed >= 1.5, "tests of 1.5 s each"
    assert max(gaps) < elapsed / 3, f"the loop stalled for {max(gaps):.2f} s of {elapsed:.2f} s"


def test_issue34_a_cancelled_call_leaves_the_others_their_results(client, url):
    async def main():
        batcher_calls = [asyncio.ensure_future(call(SLOW if index == 0 else RIGHT, DOUBLING, url=url, time_limit=10))
                         for index in range(4)]
        before_send = asyncio.ensure_future(call(RIGHT, DOUBLING, url=url, time_limit=10))
        await asyncio.sleep(0)
        before_send.cancel()  # cancelled before its batch leaves: not sent
        batcher = rlvr._batching.batcher_for(rlvr.verl._client(url), {"time_limit": 10})
        while not batcher.sending:
            await asyncio.sleep(0.005)
        batcher_calls[1].cancel()  # cancelled while its batch is in flight
        outcomes = await asyncio.gather(*batcher_calls, before_send, return_exceptions=True)
        return outcomes, batcher.requests

    before = verify_requests(client)
    outcomes, requests = asyncio.run(main())
    assert isinstance(outcomes[1], asyncio.CancelledError) and isinstance(outcomes[4], asyncio.CancelledError)
    assert [outcome["score"] for index, outcome in enumerate(outcomes[:4]) if index != 1] == [1.0] * 3
    assert requests == 1 and verify_requests(client) == before + 1


def test_issue34_a_dead_url_fails_every_waiting_call_within_seconds_naming_it(monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("RLVR_URL", url)
    monkeypatch.setenv("RLVR_CONNECT_TIMEOUT", "1.5")
    monkeypatch.setattr(rlvr.client, "_default_client", None)

    async def main():
        return await asyncio.gather(*(call(RIGHT, DOUBLING) for _ in range(5)), return_exceptions=True)

    started = time.monotonic()
    outcomes = asyncio.run(main())
    assert time.monotonic() - started < 1.5 + 1
    for outcome in outcomes:
        assert isinstance(outcome, rlvr.VerifyError), outcome
        message = str(outcome)
        assert f"cannot connect to the rlvr server at {url}" in message and "connection refused" in message, message
        assert f"$RLVR_URL is '{url}'" in message
    rlvr.client._default_client.close()


def test_issue34_a_server_that_never_answers_is_an_error_at_the_deadline():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # the kernel completes the handshake; nothing ever reads or answers
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(rlvr.VerifyError) as failure:
            asyncio.run(call(RIGHT, DOUBLING, url=url, deadline=2))
        elapsed = time.monotonic() - started
    assert 2 - 0.1 <= elapsed < 2 + 1.5, f"{elapsed:.1f} s for a 2 s budget"
    message = str(failure.value)
    assert message.startswith(f"{url}/v1/verify: deadline passed") and "accepted the connection but sent no answer" in message, message


def test_issue34_busy_answers_are_retried_and_refusals_raised_in_every_call(url):
    stub = _stub([429, 503], url)

    async def busy():
        return await asyncio.gather(*(call(RIGHT, DOUBLING, url=f"http://127.0.0.1:{stub.server_port}") for _ in range(3)))

    started = time.monotonic()
    results = asyncio.run(busy())
    assert [result["score"] for result in results] == [1.0] * 3
    assert time.monotonic() - started >= 1.0, "waited for Retry-After"
    stub.shutdown()

    async def refused():
        return await asyncio.gather(*(call(RIGHT, DOUBLING, url=url, profile="no-such-profile") for _ in range(3)),
                                    return_exceptions=True)

    for outcome in asyncio.run(refused()):
        assert isinstance(outcome, rlvr.VerifyError) and outcome.status == 400 and "unknown profile" in str(outcome), outcome


def test_issue34_rows_named_by_reference_score_through_the_dataset_server(serve):
    server = serve("--dataset", str(RELEASE_ROWS))
    calls = [call(right_answer(row), {"hash": row["metadata"]["hash"]}, url=server.url) for row in ROWS]
    calls += [call(WRONG, {"index": index}, url=server.url) for index in range(len(ROWS))]

    async def main():
        return await asyncio.gather(*calls)

    results = asyncio.run(main())
    assert [result["score"] for result in results] == [1.0] * len(ROWS) + [0.0] * len(ROWS)


def test_issue34_a_batch_past_the_servers_body_limit_is_sent_in_halves(serve):
    server = serve("--max-body-bytes", "100000")
    large = {"inputs": ["2\n" + " " * 30000, "5\n"], "outputs": ["4\n", "10\n"]}
    too_large = {"inputs": ["2\n" + " " * 150000], "outputs": ["4\n"]}

    async def main():
        together = await asyncio.gather(*(call(RIGHT, large, url=server.url) for _ in range(6)))
        alone = await asyncio.gather(call(RIGHT, too_large, url=server.url), call(RIGHT, DOUBLING, url=server.url),
                                     return_exceptions=True)
        return together, alone

    started = time.monotonic()
    together, alone = asyncio.run(main())
    assert [result["score"] for result in together] == [1.0] * 6, "180 kB together, 90 kB in halves"
    assert isinstance(alone[0], rlvr.VerifyError) and alone[0].status == 413 and "--max-body-bytes" in str(alone[0]), alone[0]
    assert alone[1]["score"] == 1.0, "its batch-mate is scored"
    assert time.monotonic() - started < 60, "a refusal, not retries until the deadline"
