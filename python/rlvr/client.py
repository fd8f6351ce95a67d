"""`Client`: batch verification against one or more `rlvr serve` URLs, or a local server it
starts itself. Standard library only.

* Sharding: a batch is cut into contiguous shards spread over the URLs (and into requests of
  at most `max_batch` jobs), sent concurrently, and put back in job order.
* Retries: 429 (honouring Retry-After), any 5xx and connection errors are retried with
  exponential backoff on the next URL, until the call's deadline (`deadline`, or
  `$RLVR_DEADLINE`, seconds); other 4xx raise at once. Each retry is logged (logger
  `rlvr.client`, a warning) with its cause.
* Failing fast: a connection is given `connect_timeout` seconds (or `$RLVR_CONNECT_TIMEOUT`;
  default 10). When no URL accepts a connection for that long (refused, unreachable, unknown
  host), the call raises `VerifyError` naming the URLs and the cause, instead of retrying until
  the deadline. A server that accepts but never answers is an error at the deadline, naming
  the URL.
* A body past the server's `--max-body-bytes` is refused (413) by the server before it reads
  it all: both transports read that answer (not the broken pipe of the rest of the body) and
  raise `VerifyError` with status 413 at once.
* Async: `averify` / `aget_reward` run the same requests on threads, so an event loop (TRL's
  async reward functions, verl's reward loop) is never blocked. `averify_on_loop` runs them on
  the event loop itself (asyncio streams, no thread), with the same retry policy (`_Attempts`).
"""

from __future__ import annotations

import asyncio
import http.client
import io
import json
import logging
import math
import os
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Sequence, Union

from rlvr._local import LocalServer
from rlvr.ground_truth import GroundTruthError, plain, reference_of, tests_of

RETRIED_STATUSES = {429} | set(range(500, 600))
DEFAULT_DEADLINE = 900.0
DEFAULT_CONNECT_TIMEOUT = 10.0
LOG = logging.getLogger("rlvr.client")


def _seconds_setting(value: Optional[float], variable: str, default: float) -> float:
    """`value`, else the environment variable `variable` (seconds), else `default`."""
    if value is None:
        text = os.environ.get(variable, "").strip()
        if not text:
            return default
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"${variable} must be a number of seconds, not {text!r}") from None
        origin = f"${variable}"
    else:
        value = float(value)
        origin = variable.removeprefix("RLVR_").lower()
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{origin} must be a positive number of seconds, not {value!r}")
    return value


class VerifyError(RuntimeError):
    """A request was refused (4xx other than 429) or the deadline passed while retrying."""

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status


def _split(count: int, parts: int) -> List[range]:
    parts = max(1, min(parts, count))
    size, extra = divmod(count, parts)
    ranges, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        ranges.append(range(start, end))
        start = end
    return ranges


class Client:
    """A verifier client.

    `url`: None starts a local `rlvr serve --addr 127.0.0.1:0` (stopped on `close()`, on exit
    from a `with` block, or at interpreter exit); a string is one server (a comma-separated
    string is several); a list is several servers to shard over. `server_log`: a file the local
    server's log is appended to (default: this process's stderr).

    `deadline`: seconds a call may take in all, retries included (default `$RLVR_DEADLINE`,
    else 900). `connect_timeout`: seconds without any URL accepting a connection before a call
    gives up (default `$RLVR_CONNECT_TIMEOUT`, else 10).
    """

    def __init__(
        self,
        url: Union[None, str, Sequence[str]] = None,
        *,
        token: Optional[str] = None,
        profile: Optional[str] = None,
        deadline: Optional[float] = None,
        connect_timeout: Optional[float] = None,
        max_batch: int = 1024,
        max_concurrent_requests: Optional[int] = None,
        workers: Optional[int] = None,
        binary: Optional[str] = None,
        server_arguments: Sequence[str] = (),
        server_log: Optional[str] = None,
    ) -> None:
        self.server: Optional[LocalServer] = None
        if url is None:
            self.server = LocalServer(binary=binary, workers=workers, extra_arguments=server_arguments, log_path=server_log)
            urls = [self.server.url]
        elif isinstance(url, str):
            urls = [part.strip() for part in url.split(",") if part.strip()]
        else:
            urls = [str(part) for part in url]
        if not urls:
            raise ValueError("no URL given")
        self.urls = [_base_url(part) for part in urls]
        self.token = token if token is not None else os.environ.get("RLVR_TOKEN")
        self.profile = profile
        self.deadline = _seconds_setting(deadline, "RLVR_DEADLINE", DEFAULT_DEADLINE)
        self.connect_timeout = _seconds_setting(connect_timeout, "RLVR_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT)
        self.max_batch = max(1, max_batch)
        self.max_concurrent_requests = max_concurrent_requests or 4 * len(self.urls)
        self._pool = ThreadPoolExecutor(self.max_concurrent_requests, thread_name_prefix="rlvr-client")
        self._closed = False
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------
    def close(self) -> None:
        """Stops the local server (if this client started one) after its requests finish."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.shutdown(wait=True)
        if self.server is not None:
            if os.environ.get("RLVR_URL") == self.urls[0]:
                os.environ.pop("RLVR_URL", None)
            self.server.stop()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # -- verification ------------------------------------------------------------------
    def verify(self, jobs: Sequence[Dict[str, Any]], **options: Any) -> List[Dict[str, Any]]:
        """Scores jobs (`{"response", "ground_truth", "id"?}`); returns result dicts in order.
        Against `rlvr serve --dataset`, a job may name its row instead of carrying its tests:
        `{"response", "index": N}` or `{"response", "hash": "..."}` (or a ground truth that is
        only `{"index": N}` / `{"hash": "..."}`).

        Options: profile, reward ("rate" | "binary"), time_limit, memory_limit, max_tests,
        all_tests, seed, details, deadline (seconds for the whole call).
        """
        calls = self._verify_calls(jobs, options)
        futures = [self._pool.submit(self._post, *call) for call in calls]
        return self._merge_verify(len(jobs), calls, [future.result() for future in futures])

    async def averify(self, jobs: Sequence[Dict[str, Any]], **options: Any) -> List[Dict[str, Any]]:
        """`verify` for event loops."""
        calls = self._verify_calls(jobs, options)
        loop = asyncio.get_running_loop()
        answers = await asyncio.gather(
            *(loop.run_in_executor(self._pool, self._post, *call) for call in calls)
        )
        return self._merge_verify(len(jobs), calls, list(answers))

    async def averify_on_loop(self, jobs: Sequence[Dict[str, Any]], **options: Any) -> List[Dict[str, Any]]:
        """`verify` on the running event loop itself, with asyncio streams: no thread per
        request, the same retries, errors and deadlines (`rlvr.verl.compute_score_async`
        coalesces concurrent samples into calls of this)."""
        calls = self._verify_calls(jobs, options)
        answers = await asyncio.gather(*(self._apost(*call) for call in calls))
        return self._merge_verify(len(jobs), calls, list(answers))

    def get_reward(self, queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **options: Any) -> Dict[str, Any]:
        """OpenRLHF's remote reward shape, sharded over the URLs like OpenRLHF shards."""
        calls = self._reward_calls(queries, prompts, labels, options)
        futures = [self._pool.submit(self._post, *call) for call in calls]
        return _merge_rewards([future.result() for future in futures])

    async def aget_reward(self, queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **options: Any) -> Dict[str, Any]:
        calls = self._reward_calls(queries, prompts, labels, options)
        loop = asyncio.get_running_loop()
        answers = await asyncio.gather(
            *(loop.run_in_executor(self._pool, self._post, *call) for call in calls)
        )
        return _merge_rewards(list(answers))

    def metrics(self, url_index: int = 0) -> str:
        """The Prometheus text of one server."""
        request = urllib.request.Request(self.urls[url_index] + "/metrics", headers=self._headers())
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read().decode()

    # -- internals ---------------------------------------------------------------------
    def _verify_calls(self, jobs: Sequence[Dict[str, Any]], options: Dict[str, Any]):
        deadline = time.monotonic() + float(options.pop("deadline", self.deadline))
        body = {key: value for key, value in options.items() if value is not None}
        if self.profile and "profile" not in body:
            body["profile"] = self.profile
        shards = max(len(self.urls), math.ceil(len(jobs) / self.max_batch))
        calls = []
        for index, positions in enumerate(_split(len(jobs), shards)):
            shard = [_job(jobs[position], position) for position in positions]
            calls.append(("/v1/verify", dict(body, jobs=shard), index, deadline, positions))
        return calls

    @staticmethod
    def _merge_verify(count: int, calls, answers) -> List[Dict[str, Any]]:
        results: List[Optional[Dict[str, Any]]] = [None] * count
        for call, answer in zip(calls, answers):
            for position, result in zip(call[4], answer["results"]):
                results[position] = result
        return results  # type: ignore[return-value]

    def _reward_calls(self, queries, prompts, labels, options: Dict[str, Any]):
        if not (len(queries) == len(prompts) == len(labels)):
            raise ValueError("queries, prompts and labels differ in length")
        deadline = time.monotonic() + float(options.pop("deadline", self.deadline))
        profile = options.get("profile") or self.profile
        path = "/get_reward" + (f"?profile={profile}" if profile else "")
        shards = max(len(self.urls), math.ceil(len(queries) / self.max_batch))
        calls = []
        for index, positions in enumerate(_split(len(queries), shards)):
            body = {
                "query": [queries[position] for position in positions],
                "prompts": [prompts[position] for position in positions],
                "labels": [_tests_or_plain(labels[position]) for position in positions],
            }
            calls.append((path, body, index, deadline, positions))
        return calls

    def _headers(self) -> Dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _post(self, path: str, body: Dict[str, Any], shard: int, deadline: float, _positions=None) -> Dict[str, Any]:
        attempts = _Attempts(self, path, shard, deadline)
        while True:
            url, data, remaining = attempts.next(body)
            connected = False
            retry_after = None
            try:
                connection = _connection(url, min(self.connect_timeout, remaining))
                try:
                    connection.connect()
                    connected = True
                    # Past the connection, an answer may take as long as the deadline allows.
                    connection.sock.settimeout(max(deadline - time.monotonic(), 0.001))
                    try:
                        connection.request("POST", _path_of(url) + path, body=data, headers=self._headers())
                    except ConnectionError as sending:
                        # A server refusing a body past its limit (413, `--max-body-bytes`)
                        # answers and closes before taking it all: the rest of the body meets a
                        # broken pipe, and the answer it already sent is the error to raise.
                        response = _answer_sent_before(connection, sending)
                    else:
                        response = connection.getresponse()
                    payload = response.read()
                finally:
                    connection.close()
                answer = attempts.answer(url, response.status, payload)
                if answer is not None:
                    return answer
                cause = attempts.refused_cause(response.status, payload)
                retry_after = response.getheader("Retry-After")
            except (OSError, http.client.HTTPException) as error:
                cause = _describe(error, connected)
            wait = attempts.failed(cause, connected, retry_after)
            if wait > 0:
                time.sleep(wait)

    async def _apost(self, path: str, body: Dict[str, Any], shard: int, deadline: float, _positions=None) -> Dict[str, Any]:
        """`_post` on the running event loop: the same attempts, retries, causes and errors,
        with asyncio streams instead of a thread blocked in a socket."""
        attempts = _Attempts(self, path, shard, deadline)
        while True:
            url, data, remaining = attempts.next(body)
            connected = False
            retry_after = None
            try:
                try:
                    reader, writer = await asyncio.wait_for(_open(url), min(self.connect_timeout, remaining))
                except asyncio.TimeoutError:
                    raise socket.timeout("timed out") from None
                connected = True
                try:
                    request = _request_head(url, path, len(data), self._headers()) + data
                    try:
                        # Past the connection, an answer may take as long as the deadline allows.
                        raw = await asyncio.wait_for(_exchange(reader, writer, request), max(deadline - time.monotonic(), 0.001))
                    except asyncio.TimeoutError:
                        raise socket.timeout("timed out") from None
                finally:
                    writer.close()
                response = http.client.HTTPResponse(_BufferedSocket(raw))  # type: ignore[arg-type]
                response.begin()
                payload = response.read()
                answer = attempts.answer(url, response.status, payload)
                if answer is not None:
                    return answer
                cause = attempts.refused_cause(response.status, payload)
                retry_after = response.getheader("Retry-After")
            except (OSError, http.client.HTTPException) as error:
                cause = _describe(error, connected)
            wait = attempts.failed(cause, connected, retry_after)
            if wait > 0:
                await asyncio.sleep(wait)


class _Attempts:
    """The retry policy of one request, shared by `Client._post` (a thread) and
    `Client._apost` (an event loop): which URL each attempt goes to, the body it carries (the
    remaining budget as `deadline`), which answers end the call, how long to wait before the
    next attempt, and when to give up (the deadline; no URL connecting for `connect_timeout`)."""

    def __init__(self, client: "Client", path: str, shard: int, deadline: float) -> None:
        self.client = client
        self.path = path
        self.shard = shard
        self.deadline = deadline
        self.attempt = 0
        self.causes: List[str] = []
        # Since when no URL has accepted a connection (None: the last attempt connected).
        self.unreachable_since: Optional[float] = None
        self.wait = 0.0

    def _url(self, attempt: int) -> str:
        urls = self.client.urls
        return urls[(self.shard + attempt) % len(urls)]

    def next(self, body: Dict[str, Any]):
        """The URL, body and remaining seconds of the next attempt; raises `VerifyError` when
        the deadline passed."""
        remaining = self.deadline - time.monotonic()
        url = self._url(self.attempt)
        if remaining <= 0:
            raise VerifyError(
                f"{url}{self.path}: deadline passed ({self.client.deadline:g} s budget unless the call set its own) "
                f"after {self.attempt} attempt(s); last error: {self.causes[-1] if self.causes else 'none'}"
            )
        if self.path == "/v1/verify":
            body = dict(body, deadline=max(remaining, 0.001))
        self.wait = min(0.1 * 2 ** self.attempt, 5.0)
        return url, json.dumps(body, default=plain).encode(), remaining

    def answer(self, url: str, status: int, payload: bytes) -> Optional[Dict[str, Any]]:
        """The answer of a 200; None for a status that is retried; raises for any other."""
        if status == 200:
            return json.loads(payload)
        if status not in RETRIED_STATUSES:
            raise VerifyError(f"{url}{self.path}: HTTP {status}: {payload.decode(errors='replace')}", status)
        return None

    @staticmethod
    def refused_cause(status: int, payload: bytes) -> str:
        return f"HTTP {status}: {payload.decode(errors='replace')[:500]}"

    def failed(self, cause: str, connected: bool, retry_after: Optional[str] = None) -> float:
        """Records a failed attempt; the seconds to wait before the next one, or raises
        `VerifyError` when no URL has accepted a connection for `connect_timeout` seconds."""
        wait = self.wait
        if retry_after and retry_after.isdigit():
            wait = max(wait, float(retry_after))
        self.causes.append(cause)
        now = time.monotonic()
        if connected:
            self.unreachable_since = None
        else:
            self.unreachable_since = now if self.unreachable_since is None else self.unreachable_since
            connect_timeout = self.client.connect_timeout
            if now - self.unreachable_since + min(wait, self.deadline - now) >= connect_timeout or now >= self.deadline:
                tried = ", ".join(dict.fromkeys(self._url(index) for index in range(self.attempt + 1)))
                raise VerifyError(
                    f"cannot connect to the rlvr server at {tried} (tried {self.attempt + 1} time(s) over "
                    f"{now - self.unreachable_since:.1f} s; connect timeout {connect_timeout:g} s): {cause}"
                    f"{_url_hint()}"
                )
        url = self._url(self.attempt)
        self.attempt += 1
        wait = max(0.0, min(wait, self.deadline - time.monotonic()))
        if wait > 0:
            LOG.warning("rlvr: %s%s attempt %d failed (%s); retrying in %.1f s on %s", url, self.path, self.attempt, cause, wait,
                        self._url(self.attempt))
        return wait


async def _open(url: str):
    parts = urllib.parse.urlsplit(url)
    default_port = 443 if parts.scheme == "https" else 80
    context = ssl.create_default_context() if parts.scheme == "https" else None
    return await asyncio.open_connection(parts.hostname or "", parts.port or default_port, ssl=context)


def _request_head(url: str, path: str, length: int, headers: Dict[str, str]) -> bytes:
    parts = urllib.parse.urlsplit(url)
    lines = [f"POST {_path_of(url) + path} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {length}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> bytes:
    """Sends the request and returns the whole response (`Connection: close`: the server ends
    it by closing). The response is read while the body is still being sent: a server that
    refuses a body past its limit (413) answers and closes before taking it all, and that
    answer is the error to raise, not the broken pipe of the rest of the body."""
    chunks: List[bytes] = []

    async def receive() -> None:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            chunks.append(chunk)

    receiving = asyncio.ensure_future(receive())
    try:
        writer.write(request)
        await writer.drain()
        await receiving
    except ConnectionError:
        if not chunks:
            raise
    finally:
        if not receiving.done():
            receiving.cancel()
        await asyncio.gather(receiving, return_exceptions=True)
    if not chunks:
        raise http.client.RemoteDisconnected("Remote end closed connection without response")
    return b"".join(chunks)


class _BufferedSocket:
    """A received response, for `http.client.HTTPResponse` to parse (status, headers,
    Content-Length or chunked body) as it parses a socket's."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def makefile(self, *_arguments: Any, **_keywords: Any) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self.raw))  # type: ignore[arg-type]


def _connection(url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(parts.hostname or "", parts.port, timeout=timeout)


def _answer_sent_before(connection: http.client.HTTPConnection, sending: ConnectionError) -> http.client.HTTPResponse:
    """The response a server sent before it stopped reading the request (the 413 of a body past
    its limit); `sending` (the broken pipe) when it sent none. Linux keeps the bytes received
    before the server's reset readable, in order, ahead of the reset itself."""
    try:
        return connection.getresponse()
    except (OSError, http.client.HTTPException):
        raise sending from None


def _path_of(url: str) -> str:
    return urllib.parse.urlsplit(url).path.rstrip("/")


def _describe(error: BaseException, connected: bool) -> str:
    """Why an attempt failed, in words."""
    if isinstance(error, (socket.timeout, TimeoutError)):
        if connected:
            return "the server accepted the connection but sent no answer before the deadline"
        return "connecting timed out (nothing answered at that address)"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (no server listening on that port)"
    if isinstance(error, socket.gaierror):
        return f"unknown host ({error})"
    if isinstance(error, http.client.RemoteDisconnected) or (connected and isinstance(error, ConnectionError)):
        return f"the server closed the connection mid-request ({type(error).__name__}: {error})"
    return f"{type(error).__name__}: {error}"


def _url_hint() -> str:
    url = os.environ.get("RLVR_URL")
    return f" ($RLVR_URL is {url!r})" if url else ""


def _base_url(url: str) -> str:
    url = url.rstrip("/")
    for suffix in ("/v1/verify", "/get_reward", "/run_code", "/test_program"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    if not url.startswith(("http://", "https://")):
        url = "http://" + url
    return url


def _job(job: Any, position: int) -> Dict[str, Any]:
    if not isinstance(job, dict):
        raise TypeError(f"job {position} must be a dict with response and ground_truth")
    job = dict(job)
    job.setdefault("id", position)
    if "ground_truth" in job:
        reference = reference_of(job["ground_truth"])
        if reference is not None:
            # A row of the server's dataset (`rlvr serve --dataset`): sent by name, not by tests.
            del job["ground_truth"]
            job.update(reference)
        else:
            job["ground_truth"] = _tests_or_plain(job["ground_truth"])
    return plain(job)


def _tests_or_plain(value: Any) -> Any:
    """The tests in `value` (`rlvr.ground_truth.tests_of`); a value without tests is sent as
    plain JSON, and the server answers it with an `invalid_job` result saying why. A value that
    only names a dataset row (`{"index": N}`, `{"hash": "..."}`) is sent as that name."""
    reference = reference_of(value)
    if reference is not None:
        return reference
    try:
        return tests_of(value)
    except GroundTruthError:
        return plain(value)


def start_server(workers: Optional[int] = None, binary: Optional[str] = None, address: str = "127.0.0.1:0", arguments: Sequence[str] = ()) -> LocalServer:
    """Starts `rlvr serve` (the binary of this installation: `rlvr.find_binary()`) and returns
    it once it listens: `.url`, `.pid`, `.stop()` (SIGTERM; also at interpreter exit)."""
    return LocalServer(binary=binary, workers=workers, address=address, extra_arguments=arguments)


def _merge_rewards(answers: List[Dict[str, Any]]) -> Dict[str, Any]:
    merged: Dict[str, Any] = {"rewards": [], "scores": [], "extra_logs": {}}
    for answer in answers:
        merged["rewards"] += answer["rewards"]
        merged["scores"] += answer.get("scores", answer["rewards"])
        for key, values in answer.get("extra_logs", {}).items():
            merged["extra_logs"].setdefault(key, []).extend(values)
    return merged


_default_lock = threading.Lock()
_default_client: Optional[Client] = None


def default_client() -> Client:
    """The client the adapters share: `$RLVR_URL` (comma-separated for several) with
    `$RLVR_TOKEN` and `$RLVR_PROFILE`, else one local server for this process. Starting the
    local server sets `RLVR_URL`, so worker processes spawned later reuse it."""
    global _default_client
    with _default_lock:
        if _default_client is None or _default_client._closed:
            url = os.environ.get("RLVR_URL") or None
            if url is None:
                # A process pool's worker (verl's prime manager) is ended with SIGTERM, which
                # skips atexit: tie the server to the starting thread when that thread is the
                # process's main one, so it dies with the worker instead of outliving it.
                main_thread = threading.current_thread() is threading.main_thread()
                server = LocalServer(parent_death_signal=main_thread)
                _default_client = Client(server.url, profile=os.environ.get("RLVR_PROFILE") or None)
                _default_client.server = server
            else:
                _default_client = Client(url, profile=os.environ.get("RLVR_PROFILE") or None)
            if url is None:
                os.environ["RLVR_URL"] = _default_client.urls[0]
        return _default_client
