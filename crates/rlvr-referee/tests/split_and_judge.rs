//! The referee and the runner together, without the sandbox (issue 12, "Wrong answers that
//! currently score 1.0"): each hostile solution must fail, each honest one pass, and each test
//! form must be split (or not) as docs/profiles.md says. Isolation is tested with the sandbox in
//! the engine and CLI tests.

use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rlvr_referee::{Outcome, Referee, TestSplit};
use rlvr_runner::{JudgeOptions, Runner, TestLimits};
use rlvr_verify::prelude::judge_prefix;

fn python() -> String {
    std::env::var("RLVR_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn spawn(arguments: &[&str]) -> (Child, OwnedFd, OwnedFd) {
    let mut child = Command::new(python())
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python starts");
    let requests = OwnedFd::from(child.stdin.take().unwrap());
    let responses = OwnedFd::from(child.stdout.take().unwrap());
    (child, requests, responses)
}

struct Pair {
    processes: Vec<Child>,
    referee: Referee,
    runner: Runner,
    prelude: String,
}

impl Pair {
    fn new() -> Self {
        let program = rlvr_referee::referee_program();
        let (referee_process, requests, responses) =
            spawn(&rlvr_referee::interpreter_arguments(&program));
        let mut referee = Referee::new(requests, responses);
        let prelude = judge_prefix();
        referee.start(&prelude).expect("the referee starts");
        let (runner_process, requests, responses) = spawn(&rlvr_runner::interpreter_arguments());
        Self {
            processes: vec![referee_process, runner_process],
            referee,
            runner: Runner::new(requests, responses),
            prelude,
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

/// What happened to one test: not split (with the reason), or the referee's outcome (with the
/// child's tamper report).
#[derive(Debug)]
#[expect(
    dead_code,
    reason = "reasons and details are read through Debug in failure messages"
)]
enum Scored {
    Unsplit(String),
    Judged(Outcome, String, Vec<String>),
    ChildFailed(Option<i32>, bool),
}

fn score(pair: &mut Pair, solution: &str, tests: &[&str]) -> Vec<Scored> {
    let splits = pair.referee.open(solution, tests).expect("open");
    pair.runner
        .load(&[pair.prelude.as_str(), solution], "solution.py", &[], None)
        .unwrap();
    let limits = TestLimits {
        wall_ms: 5_000,
        cpu_seconds: 5,
        output_bytes: 1 << 24,
        address_space_bytes: 0,
    };
    let mut scored = Vec::new();
    for (index, split) in splits.iter().enumerate() {
        match split {
            TestSplit::Unsplit { reason } => scored.push(Scored::Unsplit(reason.clone())),
            TestSplit::Split { probes } => {
                let report = pair
                    .runner
                    .run_judge_test(
                        b"",
                        None,
                        JudgeOptions {
                            sensor: true,
                            probes: Some(probes),
                            fresh_work_directory: None,
                        },
                        limits,
                    )
                    .unwrap();
                if report.exit_code != Some(0) || !report.completed {
                    scored.push(Scored::ChildFailed(report.exit_code, report.completed));
                    continue;
                }
                let judgement = pair
                    .referee
                    .judge(index, &report.results, Duration::from_secs(10))
                    .unwrap();
                scored.push(Scored::Judged(
                    judgement.outcome,
                    judgement.detail,
                    report.tampering,
                ));
            }
        }
    }
    pair.referee.close().unwrap();
    scored
}

fn passes(scored: &Scored) -> bool {
    matches!(scored, Scored::Judged(Outcome::Pass, _, _))
}

fn assert_all_pass(pair: &mut Pair, solution: &str, tests: &[&str]) {
    for (test, scored) in tests.iter().zip(score(pair, solution, tests)) {
        assert!(passes(&scored), "{test}: {scored:?}");
    }
}

fn assert_none_pass(pair: &mut Pair, solution: &str, tests: &[&str]) {
    for (test, scored) in tests.iter().zip(score(pair, solution, tests)) {
        assert!(
            !passes(&scored) && !matches!(scored, Scored::Unsplit(_)),
            "{test}: {scored:?}"
        );
    }
}

const TREE_TESTS: &[&str] = &[
    "assert is_same_tree(invert(tree_node([4, 2, 7, 1, 3, 6, 9])), tree_node([4, 7, 2, 9, 6, 3, 1]))",
    "assert is_same_tree(invert(tree_node([])), None)",
];

const LIST_TESTS: &[&str] = &[
    "assert is_same_list(reverse(list_node([1, 2, 3])), list_node([3, 2, 1]))",
    "assert reverse(None) is None",
];

#[test]
fn honest_solutions_pass_every_split_form() {
    let mut pair = Pair::new();
    let solution = "import math\nfrom typing import List\n\
        def add(a, b):\n    return a + b\n\
        def halves(x):\n    return x / 2\n\
        def pair(x):\n    return (x, [x])\n\
        def evens(xs):\n    return (x for x in xs if x % 2 == 0)\n\
        def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n\
        def words(s):\n    return s.split()\n\
        def counts(s):\n    return collections.Counter(s)\n\
        def nothing():\n    return None\n\
        ANSWER = 6 * 7\n\
        class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        seen = {}\n        for i, n in enumerate(nums):\n            if target - n in seen:\n                return [seen[target - n], i]\n            seen[n] = i\n";
    assert_all_pass(
        &mut pair,
        solution,
        &[
            "assert add(1, 2) == 3",
            "assert add(1, 2) != 4",
            "assert nothing() is None",
            "assert add(1, 1) in (2, 3)",
            "assert is_prime(7)",
            "assert not is_prime(8)",
            "assert math.isclose(halves(1), 0.5)",
            "assert abs(halves(3) - 1.5) < 1e-9",
            "assert pair(2) == (2, [2])",
            "assert list(evens([1, 2, 3, 4])) == [2, 4]",
            "assert sorted(words('b a')) == ['a', 'b']",
            "assert counts('aab') == {'a': 2, 'b': 1}",
            "assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]",
            "assert [add(i, i) for i in range(3)] == [0, 2, 4]",
            "assert [add(i, 1) for i in range(5) if i > 2] == [4, 5]",
            "assert sum(add(i, i) for i in range(3)) == 6",
            "assert sorted(pair(3), key=lambda item: str(item)) == [3, [3]]",
            "assert list(map(is_prime, [2, 4])) == [True, False]",
            "assert add(1, 2) == 3, 'a message'",
            "data = [1, 2, 3]\nassert add(data[0], data[2]) == 4",
            "x = add(2, 2)\nassert x == 4",
            "assert True",
            "import numpy as np\nassert np.allclose(halves(np.array([2.0, 4.0]).tolist()[0]), 1.0)",
            "assert ANSWER == 42 and ANSWER != 41",
            "assert add is not None and callable(add) and add",
            "METADATA = {}\n\ndef check(value):\n    return value == 10\nassert check(add(4, 6))",
        ],
    );
}

#[test]
fn honest_linked_list_and_tree_answers_pass() {
    let mut pair = Pair::new();
    let trees = "def invert(root):\n    if root is None:\n        return None\n    root.left, root.right = invert(root.right), invert(root.left)\n    return root";
    assert_all_pass(&mut pair, trees, TREE_TESTS);
    // A solution that defines its own ListNode, as LeetCode answers often do.
    let lists = "class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n\
        def reverse(head):\n    previous = None\n    while head:\n        head.next, previous, head = previous, head, head.next\n    return previous";
    assert_all_pass(&mut pair, lists, LIST_TESTS);
    // A cycle comes back as a cycle.
    let cycle = "def loop():\n    a = ListNode(1)\n    a.next = ListNode(2, a)\n    return a";
    assert_all_pass(
        &mut pair,
        cycle,
        &["assert loop().next.next.val == 1 and loop().next.val == 2"],
    );
}

#[test]
fn in_place_solutions_are_seen_through_their_inputs() {
    let mut pair = Pair::new();
    let solution = "def rotate(nums, k):\n    k %= len(nums)\n    nums[:] = nums[-k:] + nums[:-k]";
    assert_all_pass(
        &mut pair,
        solution,
        &[
            "nums = [1, 2, 3, 4]\nrotate(nums, 1)\nassert nums == [4, 1, 2, 3]\nrotate(nums, 1)\nassert nums == [3, 4, 1, 2]",
        ],
    );
    assert_none_pass(
        &mut pair,
        "def rotate(nums, k):\n    pass",
        &["nums = [1, 2, 3, 4]\nrotate(nums, 1)\nassert nums == [4, 1, 2, 3]"],
    );
}

#[test]
fn a_prompt_function_that_shadows_a_prelude_import_is_the_solutions() {
    let mut pair = Pair::new();
    let tests = ["assert gcd(12, 18) == 6", "assert gcd(7, 5) == 1"];
    assert_all_pass(
        &mut pair,
        "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a",
        &tests,
    );
    assert_all_pass(&mut pair, "from math import gcd", &tests);
    assert_all_pass(&mut pair, "from math import *", &tests);
    // Without a gcd of its own, the prelude's does not answer for the solution.
    assert_none_pass(&mut pair, "def unrelated():\n    return 0", &tests);
    // A solution's `sqrt` does not move the expected side's `sqrt(16)` next to the solution.
    let scored = score(
        &mut pair,
        "def sqrt(x):\n    return 0\ndef root(x):\n    return x ** 0.5",
        &["assert root(16) == sqrt(16)"],
    );
    assert!(passes(&scored[0]), "{scored:?}");
}

/// Issue 12: a returned object whose `__eq__` (or `__ne__`, `__bool__`, `__hash__`) always
/// agrees scored 1.0.
#[test]
fn issue_12_always_agreeing_objects_fail() {
    let mut pair = Pair::new();
    let solution = "class Yes:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n    def __bool__(self):\n        return True\n    def __hash__(self):\n        return hash(5)\n    def __lt__(self, other):\n        return True\n    def __contains__(self, item):\n        return True\n\
        class Int(int):\n    def __eq__(self, other):\n        return True\n\
        def f(x):\n    return Yes()\n\
        def g(x):\n    return Int(0)\n\
        def h(x):\n    return [Yes()]\n\
        def is_same_tree(a, b):\n    return True\n\
        def invert(root):\n    return Yes()";
    assert_none_pass(
        &mut pair,
        solution,
        &[
            "assert f(1) == 5",
            "assert not (f(1) != 5)",
            "assert f(1)",
            "assert f(1) in {5}",
            "assert g(1) == 5",
            "assert h(1) == [5]",
            "assert abs(f(1) - 5) < 1e-9",
            "assert math.isclose(f(1), 5)",
            "assert bool(f(1)) and any([f(1)]) and any(h(1))",
            "assert all(map(f, [1, 2]))",
            "assert list(filter(f, [2, 4])) == [2, 4]",
            "assert len(h(1)) == 1 and sorted(h(1)) == [5]",
            TREE_TESTS[0],
        ],
    );
}

/// Issue 12: a function that reads the expected value from its caller (`sys._getframe`,
/// `inspect`, `f_back.f_code.co_consts`, `gc` referrers) and returns it scored 1.0.
#[test]
fn issue_12_reading_the_expected_value_from_the_caller_fails() {
    let mut pair = Pair::new();
    let frames = "import sys\n\
        def f(x):\n    caller = sys._getframe(1)\n    constants = [c for c in caller.f_code.co_consts if isinstance(c, int) and c != x]\n    names = [v for k, v in caller.f_locals.items() if isinstance(v, int) and v != x]\n    found = constants + names\n    return found[-1] if found else -1";
    let inspect = "import inspect\n\
        def f(x):\n    frame = inspect.currentframe().f_back\n    while frame is not None:\n        for c in frame.f_code.co_consts:\n            if isinstance(c, int) and c not in (x, 0, 1, None):\n                return c\n        frame = frame.f_back\n    return -1";
    let referrers = "import gc\n\
        def f(x):\n    for o in gc.get_objects():\n        if isinstance(o, dict):\n            for v in list(o.values()):\n                if isinstance(v, int) and v == 12345:\n                    return v\n        if isinstance(o, (list, tuple)) and 12345 in o:\n            return 12345\n    return -1";
    let tests = [
        "assert f(7) == 12345",
        "expected = 12345\nassert f(7) == expected",
    ];
    for solution in [frames, inspect, referrers] {
        let scored = score(&mut pair, solution, &tests);
        for (test, scored) in tests.iter().zip(&scored) {
            assert!(
                matches!(scored, Scored::Judged(Outcome::Fail, _, _)),
                "{test}: {scored:?}"
            );
        }
        // The sensor saw it.
        let Scored::Judged(_, _, tampering) = &scored[0] else {
            unreachable!()
        };
        assert!(
            tampering
                .iter()
                .any(|kind| kind == "frame_introspection" || kind == "gc_introspection"),
            "{tampering:?}"
        );
    }
}

/// Issue 12: a solution that redefines a helper the test relies on (a tree/list comparer,
/// `isinstance`, `type`, `abs`, `math.isclose`, builtins) scored 1.0.
#[test]
fn issue_12_redefining_helpers_and_builtins_changes_nothing() {
    let mut pair = Pair::new();
    let solution = "import builtins, math\n\
        def is_same_tree(a, b):\n    return True\n\
        def is_same_list(a, b):\n    return True\n\
        def isinstance(*a):\n    return True\n\
        def abs(x):\n    return 0\n\
        type = lambda *a: int\n\
        math.isclose = lambda *a, **k: True\n\
        builtins.sorted = lambda *a, **k: [1, 2, 3]\n\
        builtins.len = lambda x: 3\n\
        builtins.all = lambda x: True\n\
        def invert(root):\n    return None\n\
        def reverse(head):\n    return None\n\
        def f(x):\n    return 'wrong'";
    assert_none_pass(
        &mut pair,
        solution,
        &[
            TREE_TESTS[0],
            LIST_TESTS[0],
            "assert isinstance(f(1), int)",
            "assert type(f(1)) == int",
            "assert abs(f(1) - 2.5) < 1e-9",
            "assert math.isclose(f(1), 2.5)",
            "assert sorted(f(1)) == [1, 2, 3]",
            "assert len(f(1)) == 3",
            "assert all([f(1) == 2])",
        ],
    );
}

/// Issue 12: `sys.settrace`, `sys.setprofile` and `f_lineno` jumps over the assert statements
/// scored 1.0. The asserts are not in the child any more; what the trace skips is the probes.
#[test]
fn issue_12_tracing_and_line_jumps_skip_nothing_that_counts() {
    let mut pair = Pair::new();
    let settrace = "import sys\n\
        def tracer(frame, event, arg):\n    if event == 'line' and frame.f_code.co_filename != 'solution.py':\n        try:\n            frame.f_lineno = frame.f_lineno + 1\n        except Exception:\n            pass\n    return tracer\n\
        sys.settrace(tracer)\nsys._getframe().f_trace = tracer\n\
        def f(x):\n    return 0";
    let setprofile = "import sys\nsys.setprofile(lambda *a: None)\ndef f(x):\n    return 0";
    for solution in [settrace, setprofile] {
        let scored = score(&mut pair, solution, &["assert f(1) == 1"]);
        assert!(!passes(&scored[0]), "{scored:?}");
        if let Scored::Judged(_, _, tampering) = &scored[0] {
            assert!(
                tampering.iter().any(|kind| kind == "tracing"),
                "{tampering:?}"
            );
        }
    }
}

/// Issue 12: forging the "ran to the end" evidence. A split test's evidence is the values
/// themselves: a solution that writes its own results file and leaves has only written a
/// guess, and its run is incomplete.
#[test]
fn issue_12_a_forged_results_file_is_a_guess_and_incomplete() {
    let mut pair = Pair::new();
    let solution = "import os, json\n\
        def f(x):\n    report = json.dumps({'table': [], 'results': [['value', 999]], 'snapshots': []}).encode()\n    for fd in range(3, 64):\n        try:\n            os.lseek(fd, 0, 0)\n            os.write(fd, report)\n        except OSError:\n            pass\n    os._exit(0)";
    let scored = score(&mut pair, solution, &["assert f(1) == 12345"]);
    assert!(
        matches!(scored[0], Scored::ChildFailed(Some(0), false)),
        "{scored:?}"
    );
    // A garbled report is refused as forged, never read as a pass.
    let garbling = "import os\n\
        def f(x):\n    for fd in range(3, 64):\n        try:\n            os.write(fd, b'{not json')\n        except OSError:\n            pass\n    return 12345";
    let splits = pair
        .referee
        .open(garbling, &["assert f(1) == 12345"])
        .unwrap();
    let TestSplit::Split { .. } = &splits[0] else {
        panic!("{splits:?}")
    };
    let judgement = pair
        .referee
        .judge(0, b"{not json", Duration::from_secs(5))
        .unwrap();
    assert_eq!(judgement.outcome, Outcome::Error);
    assert!(judgement.forged);
    pair.referee.close().unwrap();
}

#[test]
fn the_expected_side_never_reaches_the_probe_spec() {
    let mut pair = Pair::new();
    let splits = pair
        .referee
        .open(
            "def f(x):\n    return x",
            &[
                "assert f(1) == 987654321",
                "expected = [424242]\nassert f([1]) == expected",
                "assert math.isclose(f(0.5), 0.123456789)",
                "assert is_same_list(f(list_node([1])), list_node([555666]))",
            ],
        )
        .unwrap();
    for split in &splits {
        let TestSplit::Split { probes } = split else {
            panic!("{splits:?}")
        };
        for secret in ["987654321", "424242", "123456789", "555666"] {
            assert!(!probes.contains(secret), "{probes}");
        }
    }
    pair.referee.close().unwrap();
}

#[test]
fn forms_that_cannot_be_split_say_why() {
    let mut pair = Pair::new();
    let cases = [
        (
            "for x in range(3):\n    if x:\n        assert f(x) == x",
            "if statement",
        ),
        (
            "for x in range(3):\n    assert f(x) == x\nelse:\n    pass",
            "else clause",
        ),
        (
            "for x in range(3):\n    assert f(x) == x\n    break",
            "break or continue",
        ),
        ("for x in f(3):\n    assert x", "loop over the solution"),
        (
            "y = f(1)\nfor x in range(y):\n    assert f(x) == x",
            "loop over the solution",
        ),
        (
            "for x in range(3):\n    y = f(x)\n    z = y + 1\n    assert f(z) == z",
            "computes from results",
        ),
        ("assert any(f(x) == x for x in range(3))", "comprehension"),
        (
            "def check(candidate):\n    assert candidate(1) == 1\ncheck(f)",
            "hands the solution's function",
        ),
        ("assert (lambda: f(1))() == 1", "lambda"),
        (
            "x = 1\nassert f(x) == 1\nx = 2\nassert f(x) == 2",
            "rebinds",
        ),
        ("assert f(1) ==", "does not parse"),
        (
            "value = object()\nassert f(value) is value",
            "not plain data",
        ),
        ("from math import *\nassert f(1) == 1", "star-imports"),
    ];
    let tests: Vec<&str> = cases.iter().map(|(test, _)| *test).collect();
    let splits = pair
        .referee
        .open("def f(x):\n    return x", &tests)
        .unwrap();
    for ((test, reason), split) in cases.iter().zip(&splits) {
        match split {
            TestSplit::Unsplit { reason: actual } => {
                assert!(actual.contains(reason), "{test}: {actual}")
            }
            other => panic!("{test} was split: {other:?}"),
        }
    }
    pair.referee.close().unwrap();
}

/// HumanEval's random-input loops: a `for` over what the test computes is unrolled, each
/// iteration's inputs go to the child and its checks run here.
#[test]
fn loops_over_the_tests_own_values_are_unrolled() {
    let mut pair = Pair::new();
    let cyclic = "def encode_cyclic(s):\n    return s[1:] + s[:1]\ndef decode_cyclic(s):\n    return s[-1:] + s[:-1]";
    let tests = [
        "from random import randint, choice\nimport string\nletters = string.ascii_lowercase\n\
         for _ in range(50):\n    str = ''.join(choice(letters) for i in range(randint(10, 20)))\n    \
         encoded_str = encode_cyclic(str)\n    assert decode_cyclic(encoded_str) == str",
        "import random\nrng = random.Random(42)\nfor _ in range(20):\n    data = [rng.randint(-9, 9) for _ in range(5)]\n    \
         total = sum(data)\n    assert decode_cyclic(encode_cyclic(data)) == data and total == sum(data)",
        "for x in range(5):\n    assert encode_cyclic('ab' * x) == ('ba' * x)",
    ];
    assert_all_pass(&mut pair, cyclic, &tests);
    let wrong =
        "def encode_cyclic(s):\n    return s[1:] + s[:1]\ndef decode_cyclic(s):\n    return s";
    let scored = score(&mut pair, wrong, &tests[..1]);
    assert!(
        matches!(scored[0], Scored::Judged(Outcome::Fail, _, _)),
        "{scored:?}"
    );
    // In place, inside a loop: each iteration sees what the call did to its own input.
    assert_all_pass(
        &mut pair,
        "def rotate(nums, k):\n    nums[:] = nums[-k:] + nums[:-k]",
        &[
            "for n in range(1, 4):\n    nums = list(range(n))\n    rotate(nums, 1)\n    assert nums == list(range(n))[-1:] + list(range(n))[:-1]",
        ],
    );
}

/// A response cannot choose the weaker path: the same tests are split, or not, whatever the
/// solution binds, redefines or fails to parse.
#[test]
fn whether_a_test_is_split_never_depends_on_the_response() {
    let mut pair = Pair::new();
    let tests = [
        "assert f(1) == 2",
        "assert f is not None",
        "assert gcd(4, 6) == 2",
        "assert sqrt(f(4)) == 2",
        "assert callable(f) and ANSWER == 1",
        "for x in range(3):\n    assert f(x) == x",
        "assert all(f(x) == x for x in range(3))",
        "x = f(1)\nassert g(x) == 2",
        "assert is_same_tree(f(tree_node([1])), tree_node([1]))",
    ];
    let solutions = [
        "def f(x):\n    return x",
        "f = lambda x: x\nANSWER = 1",
        "class f:\n    pass\ndef gcd(a, b):\n    return 1\nsqrt = abs",
        "from math import *\nfrom builtins import *\nimport sys as f",
        "def is_same_tree(a, b):\n    return True\ntree_node = None\nisinstance = type = None",
        "x = (",
        "exec('def f(x): return x')",
    ];
    let mut decisions = Vec::new();
    for solution in solutions {
        let splits = pair.referee.open(solution, &tests).unwrap();
        decisions.push(
            splits
                .iter()
                .map(|split| matches!(split, TestSplit::Split { .. }))
                .collect::<Vec<_>>(),
        );
        pair.referee.close().unwrap();
    }
    for decision in &decisions[1..] {
        assert_eq!(decision, &decisions[0]);
    }
    assert_eq!(decisions[0], [true; 9], "`all(...)` is judged as its loop");
}

#[test]
fn a_jobs_test_code_does_not_reach_the_next_job() {
    let mut pair = Pair::new();
    let first = score(
        &mut pair,
        "def f(x):\n    return x",
        &[
            "import math\nmath.isclose = lambda *a, **k: True\nis_same_list = None\nassert f(1) == 1",
        ],
    );
    assert!(passes(&first[0]), "{first:?}");
    assert_none_pass(
        &mut pair,
        "def f(x):\n    return 0",
        &["assert math.isclose(f(1), 1)"],
    );
}
