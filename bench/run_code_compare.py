"""SandboxFusion's `/run_code` against rlvr serve's, same requests (issues 24 and 35).

N a+b requests in one language (C++ by default) (each its own stdin), `concurrency` at a time, POSTed to URL/run_code; with
`--distinct` every request's source differs by a comment (no compile cache can help), without
it all share one source (what a verl batch of one response's tests sends). Prints one JSON
object: requests, seconds, requests_per_second, median and p90 latency, and how many answered
Success with the right sum.

Usage: run_code_compare.py URL [--requests N] [--concurrency C] [--distinct] [--language cpp|python|bash|java|typescript]
"""

import json
import statistics
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

SOURCES = {
    "cpp": "#include <bits/stdc++.h>\nint main(){ long long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n",
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "bash": "read a b\necho $((a + b))\n",
    "java": "import java.util.Scanner;\n\npublic class Main {\n    public static void main(String[] args) {\n"
            "        Scanner in = new Scanner(System.in);\n        long a = in.nextLong(), b = in.nextLong();\n"
            "        System.out.println(a + b);\n    }\n}\n",
    "typescript": "import fs from \"fs\";\nconst [a, b]: number[] = fs.readFileSync(0, \"utf8\").trim().split(/\\s+/).map(Number);\n"
                  "console.log(a + b);\n",
}
COMMENTS = {"cpp": "// request {}\n", "python": "# request {}\n", "bash": "# request {}\n", "java": "// request {}\n",
            "typescript": "// request {}\n"}


def main():
    url = sys.argv[1].rstrip("/") + "/run_code"
    def option(name, default):
        return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default

    requests = option("--requests", 100)
    concurrency = option("--concurrency", 2)
    language = option("--language", "cpp")
    distinct = "--distinct" in sys.argv
    run = time.time_ns()  # distinct sources differ from every earlier run's too

    def one(index):
        source = SOURCES[language] + (COMMENTS[language].format(f"{run}-{index}") if distinct else "")
        body = json.dumps({"code": source, "stdin": f"{index} {index * 7}\n", "language": language,
                           "compile_timeout": 60, "run_timeout": 10}).encode()
        request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=300) as response:
            answer = json.loads(response.read())
        elapsed = time.perf_counter() - started
        right = answer.get("status") == "Success" and (answer.get("run_result") or {}).get("stdout", "").strip() == str(index * 8)
        return elapsed, right

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(one, range(requests)))
    seconds = time.perf_counter() - started
    latencies = sorted(elapsed for elapsed, _ in results)
    print(json.dumps({
        "requests": requests,
        "seconds": round(seconds, 3),
        "requests_per_second": round(requests / seconds, 2),
        "median_ms": round(statistics.median(latencies) * 1000, 1),
        "p90_ms": round(latencies[int(0.9 * (len(latencies) - 1))] * 1000, 1),
        "right": sum(right for _, right in results),
    }))


if __name__ == "__main__":
    main()
