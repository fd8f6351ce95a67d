//! The referee against a scripted solution child, without the sandbox (issue 22): the test
//! plays the child at the protocol level, honest or lying, and checks what the referee asks,
//! what it never sends, and what it decides. The real child, the engine's relay and the sandbox
//! are tested together in the engine's and the CLI's tests.

use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rlvr_referee::{Event, Judgement, Referee, RefereeOutcome};
use rlvr_test_support::python;
use rlvr_verify::prelude::judge_prefix;
use serde_json::{Value, json};

struct Started {
    process: Child,
    referee: Referee,
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn start(tests: &[&str]) -> Started {
    let mut process = Command::new(python())
        .args(rlvr_referee::interpreter_arguments())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python starts");
    let requests = OwnedFd::from(process.stdin.take().unwrap());
    let responses = OwnedFd::from(process.stdout.take().unwrap());
    let mut referee = Referee::new(requests, responses);
    referee.start(&judge_prefix()).expect("the referee starts");
    referee.open(tests).expect("the job opens");
    Started { process, referee }
}

/// What a scripted child answers to one request (the request's `id` is added unless the
/// answer names one; `null` sends nothing).
type Script<'a> = dyn FnMut(&Value) -> Value + 'a;

/// Runs test `index` with `names` as the child's module names and `script` answering every
/// request; returns the verdict and every message the referee sent the child.
fn run(
    started: &mut Started,
    index: usize,
    names: Value,
    script: &mut Script<'_>,
) -> (Judgement, Vec<Value>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let referee = &mut started.referee;
    referee.begin_test(index, deadline).unwrap();
    let ready = json!({"t": "ready", "names": names});
    referee
        .deliver(
            &Referee::message_frame(ready.to_string().as_bytes()),
            deadline,
        )
        .unwrap();
    let mut sent = Vec::new();
    loop {
        match referee.next_event(deadline).unwrap() {
            Event::Send(message) => {
                let message: Value = serde_json::from_slice(&message).unwrap();
                sent.push(message.clone());
                let mut reply = script(&message);
                if reply.is_null() {
                    continue;
                }
                if reply.get("id").is_none() {
                    reply["id"] = message["id"].clone();
                }
                referee
                    .deliver(
                        &Referee::message_frame(reply.to_string().as_bytes()),
                        deadline,
                    )
                    .unwrap();
            }
            Event::Verdict(judgement) => return (judgement, sent),
        }
    }
}

fn function(number: u64) -> Value {
    json!(["callable", {"h": number}, {"handles": {number.to_string(): 0}, "types": {"0": []}}])
}

fn class(number: u64, methods: &[&str]) -> Value {
    json!(["class", {"h": number}, {"handles": {number.to_string(): 1}, "types": {"1": methods}}])
}

fn value(v: Value) -> Value {
    json!({"t": "return", "v": v, "tab": []})
}

/// An honest `square` (handle 0) that answers calls with data.
fn honest_square(message: &Value) -> Value {
    assert_eq!(message["t"], "call", "{message}");
    value(json!(message["a"][0].as_i64().unwrap().pow(2)))
}

#[test]
fn humaneval_raw_check_runs_here_and_the_child_only_ever_sees_arguments() {
    // HumanEval's form: the test hands the solution's function to its own `check`.
    let test = "METADATA = {}\n\ndef check(candidate):\n    assert candidate(1111) == 1234321\n    assert candidate(2222) == 4937284\n    for x in range(3):\n        assert candidate(x) == x * x\n\ncheck(square)";
    let mut started = start(&[test]);
    let (judgement, sent) = run(
        &mut started,
        0,
        json!({"square": function(0)}),
        &mut honest_square,
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
    let arguments: Vec<Value> = sent.iter().map(|message| message["a"][0].clone()).collect();
    assert_eq!(
        arguments,
        [json!(1111), json!(2222), json!(0), json!(1), json!(2)]
    );
    // No expected value, nor the test's text, ever goes to the child.
    let everything = serde_json::to_string(&sent).unwrap();
    for secret in ["1234321", "4937284", "check", "candidate", "METADATA"] {
        assert!(
            !everything.contains(secret),
            "{secret} reached the child: {everything}"
        );
    }
    // A wrong answer fails at the first assert, and the later calls are never made.
    let (judgement, sent) = run(&mut started, 0, json!({"square": function(0)}), &mut |_| {
        value(json!(0))
    });
    assert_eq!(judgement.outcome, RefereeOutcome::Fail);
    assert_eq!(sent.len(), 1);
}

#[test]
fn a_lying_object_never_answers_for_data() {
    // Every check below passes in a fresh process for an object whose methods always agree.
    let tests = [
        "assert square(2) == 4",
        "assert not (square(2) != 4)",
        "assert square(7)",
        "assert abs(square(3) - 9) < 1e-9",
        "assert square(0) in {0}",
        "assert square(3).__eq__(9)",
        "assert 4 in square(2)",
        "assert greet('bob').startswith('Hello')",
        "assert all(map(square, [1, 2]))",
    ];
    let mut started = start(&tests);
    let names = json!({"square": function(0), "greet": function(1)});
    for (index, test) in tests.iter().enumerate() {
        let mut liar = |message: &Value| match message["t"].as_str().unwrap() {
            "call" => json!({"t": "return", "v": {"h": 9}, "tab": [], "handles": {"9": 5},
                             "types": {"5": ["startswith", "__eq__"]}}),
            // Iterating the object (for `in`): it yields objects of its own again.
            "op" => json!({"t": "return", "v": {"h": 9}, "tab": []}),
            "next" => json!({"t": "return", "v": [{"h": 9}], "tab": [], "done": true}),
            "method" => value(json!(true)),
            other => panic!("unexpected {other}: {message}"),
        };
        let (judgement, _) = run(&mut started, index, names.clone(), &mut liar);
        assert_ne!(
            judgement.outcome,
            RefereeOutcome::Pass,
            "{test}: {judgement:?}"
        );
        assert_eq!(judgement.untrusted_comparisons, 0, "{test}");
    }
}

#[test]
fn a_stop_iteration_from_a_call_does_not_end_the_tests_loop() {
    // `all(map(f, data))` would be True if f's StopIteration ended the map early.
    let mut started = start(&["assert all(map(is_even, [1, 3]))"]);
    let (judgement, _) = run(
        &mut started,
        0,
        json!({"is_even": function(0)}),
        &mut |_| json!({"t": "raise", "type": "StopIteration", "message": ""}),
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Error, "{judgement:?}");
}

#[test]
fn leetcode_classes_their_methods_and_comparisons_between_their_objects() {
    let tests = [
        "sol = Solution()\nassert sol.twoSum([2, 7, 11, 15], 9) == [0, 1]\nassert sol.twoSum([3, 3], 6) == [0, 1]",
        "a = Point(1, 2)\nb = Point(1, 2)\nassert a == b",
    ];
    let mut started = start(&tests);
    let names = json!({"Solution": class(0, &["twoSum"]), "Point": class(1, &[])});
    let (judgement, sent) = run(
        &mut started,
        0,
        names.clone(),
        &mut |message| match message["t"].as_str().unwrap() {
            "call" => json!({"t": "return", "v": {"h": 7}, "tab": [], "handles": {"7": 1}}),
            "method" => {
                assert_eq!(message["n"], "twoSum");
                json!({"t": "return", "v": {"r": 0}, "tab": [["list", [0, 1]]]})
            }
            other => panic!("unexpected {other}: {message}"),
        },
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
    // One round trip per method call: the type's method names came with the class; the call of
    // the class asked for a live instance.
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[0]["live"], 1, "{sent:?}");
    assert!(sent[1].get("live").is_none(), "{sent:?}");
    // Two of the solution's own objects compared: their class names and attributes, as data
    // (fresh snapshots), never the solution's `__eq__`; nothing counted.
    for (other_x, expected) in [(1, RefereeOutcome::Pass), (5, RefereeOutcome::Fail)] {
        let mut next = 20;
        let (judgement, sent) =
            run(
                &mut started,
                1,
                names.clone(),
                &mut |message| match message["t"].as_str().unwrap() {
                    "call" => {
                        next += 1;
                        json!({"t": "return", "v": {"h": next}, "tab": []})
                    }
                    "op" => {
                        assert_eq!(message["n"], "snapshot", "{message}");
                        let handle = message["o"]["h"].as_i64().unwrap();
                        let x = if handle == 21 { 1 } else { other_x };
                        json!({"t": "return", "v": {"r": 0},
                           "tab": [["record", "Point", handle, ["x", x, "y", 2]]]})
                    }
                    other => panic!("unexpected {other}: {message}"),
                },
            );
        assert_eq!(judgement.outcome, expected, "{judgement:?}");
        assert_eq!(judgement.untrusted_comparisons, 0);
        assert!(sent.iter().all(|message| message["n"] != "eq"), "{sent:?}");
    }
}

#[test]
fn records_are_data_their_methods_and_truth_are_refused() {
    let tests = [
        "e = find([1, 2, 2], 2)\nassert e.count == 2 and e.index == 1",
        "assert find([1], 1).startswith('x')",
        "assert find([1], 1)",
        "assert find([1], 1) == {'count': 2, 'index': 1}",
    ];
    let mut started = start(&tests);
    let names = json!({"find": function(0)});
    for (index, expected) in [
        (0, RefereeOutcome::Pass),
        (1, RefereeOutcome::Fail),
        (2, RefereeOutcome::Fail),
        (3, RefereeOutcome::Fail),
    ] {
        let (judgement, sent) = run(&mut started, index, names.clone(), &mut |message| {
            assert_eq!(message["t"], "call", "{message}");
            // An `Entry` whose class has a `startswith` method: never asked.
            json!({"t": "return", "v": {"r": 0}, "handles": {"5": 3}, "types": {"3": ["startswith"]},
                   "tab": [["record", "Entry", 5, ["count", 2, "index", 1]]]})
        });
        assert_eq!(
            judgement.outcome, expected,
            "{}: {judgement:?}",
            tests[index]
        );
        assert_eq!(sent.len(), 1, "{sent:?}");
    }
}

#[test]
fn shared_names_are_the_solutions_on_the_tests_values_and_the_referees_on_computed_ones() {
    let tests = [
        "assert sum([1, 2]) == 4",
        "def check(candidate):\n    assert candidate(4, 6) == 7\ncheck(gcd)",
        "assert abs(half(3) - 1.5) < 1e-9",
        "r = half(3)\nassert abs(r - 1.5) < 1e-9 and sum([r]) == 1.5",
    ];
    let mut started = start(&tests);
    // The solution's `sum` and `gcd` answer for the test's own values, whatever the order.
    let names =
        json!({"sum": function(0), "gcd": function(1), "abs": function(2), "half": function(3)});
    for index in 0..2 {
        let (judgement, sent) = run(&mut started, index, names.clone(), &mut |message| {
            value(json!(if message["f"]["h"] == 0 { 4 } else { 7 }))
        });
        assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
        assert_eq!(sent.len(), 1, "{sent:?}");
    }
    // Applied to what a call computed: the referee's `abs` and `sum`, never the solution's.
    for index in 2..4 {
        let (judgement, sent) = run(&mut started, index, names.clone(), &mut |message| {
            assert_eq!(
                message["f"]["h"], 3,
                "only half is the solution's: {message}"
            );
            value(json!(1.5))
        });
        assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
        assert_eq!(sent.len(), 1, "{sent:?}");
    }
}

#[test]
fn a_standard_object_the_solution_imported_is_the_referees_own() {
    let tests = [
        "assert Fraction(1, 3) == Fraction(2, 6) and type(Fraction(1, 2)).__module__ == 'fractions'",
        "assert system('x') == 0",
    ];
    let mut started = start(&tests);
    let handle = json!({"handles": {"0": 0}, "types": {"0": []}});
    // `from fractions import Fraction`: the referee's own class, no call reaches the child.
    let (judgement, sent) = run(
        &mut started,
        0,
        json!({"Fraction": ["std", {"h": 0}, handle, "fractions", "Fraction"]}),
        &mut |message| panic!("{message}"),
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
    assert!(sent.is_empty());
    // Outside the pure modules the claim is refused: a stand-in whose calls go to the child.
    let (judgement, sent) = run(
        &mut started,
        1,
        json!({"system": ["std", {"h": 0}, handle, "os", "system"]}),
        &mut |_| value(json!(0)),
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
    assert_eq!(sent.len(), 1, "{sent:?}");
}

#[test]
fn exceptions_keep_their_class_hierarchy_and_arguments() {
    let test = "try:\n    parse('x')\nexcept Invalid as error:\n    assert isinstance(error, ValueError) and error.args == ('x', 7)\n    assert str(error) == 'bad x'\nelse:\n    raise AssertionError";
    let mut started = start(&[test]);
    let invalid = json!(["exception", {"r": 0}, {"tab": [["exctype", "Invalid", 0, [{"bi": "ValueError"}]]]}]);
    let (judgement, _) = run(
        &mut started,
        0,
        json!({"Invalid": invalid, "parse": function(1)}),
        &mut |_| {
            json!({"t": "raise", "type": "__main__.Invalid", "message": "bad x", "v": {"r": 1},
                   "tab": [["exctype", "Invalid", 0, [{"bi": "ValueError"}]],
                           ["exception", {"r": 0}, ["x", 7], [], "bad x"]]})
        },
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
}

#[test]
fn arguments_changed_in_place_are_written_back_into_the_tests_objects() {
    let test = "nums = [1, 2, 3]\nalias = nums\nrotate(nums, 1)\nassert alias == [3, 1, 2]\nassert touch(nums) is nums";
    let mut started = start(&[test]);
    let names = json!({"rotate": function(0), "touch": function(1)});
    let (judgement, _) = run(&mut started, 0, names, &mut |message| {
        if message["f"]["h"] == 0 {
            json!({"t": "return", "v": null, "tab": [["list", [3, 1, 2]]], "back": [[0, {"r": 0}]]})
        } else {
            json!({"t": "return", "v": {"r": 0}, "tab": [["list", [3, 1, 2]]],
                   "back": [[0, {"r": 0}]], "same": 0})
        }
    });
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
}

#[test]
fn the_child_may_call_the_tests_functions_back() {
    let mut started = start(&["assert apply(lambda x: x * 10, 3) == 31"]);
    let mut stage = 0;
    let (judgement, sent) = run(
        &mut started,
        0,
        json!({"apply": function(0)}),
        &mut |message| {
            stage += 1;
            match stage {
                1 => {
                    assert_eq!(
                        message["a"][0],
                        json!({"x": 0}),
                        "the lambda is a handle: {message}"
                    );
                    json!({"t": "call", "id": "c1", "f": {"x": 0}, "a": [3], "k": [], "tab": []})
                }
                2 => {
                    assert_eq!(
                        (message["t"].clone(), message["v"].clone()),
                        (json!("return"), json!(30))
                    );
                    json!({"t": "return", "id": 1, "v": 31, "tab": []})
                }
                _ => panic!("{message}"),
            }
        },
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
    assert_eq!(sent.len(), 2);
}

#[test]
fn shared_names_inside_nested_code_are_decided_too_and_tests_without_any_run_as_written() {
    // The referee skips its use-site analysis for a test that names no shared name anywhere
    // (test.py, `names_in`): a shared name only inside a lambda, a comprehension, a nested
    // function or a class body still makes the solution's `sum` answer for the test's values.
    let tests = [
        "f = lambda: sum([1, 2])\nassert f() == 4",
        "assert [sum([1, 2]) for _ in [0]] == [4]",
        "def g():\n    def h():\n        return sum([1, 2])\n    return h()\nassert g() == 4",
        "class T:\n    value = sum([1, 2])\nassert T.value == 4",
        "assert half(3) == 1.5",
    ];
    let mut started = start(&tests);
    let names = json!({"sum": function(0), "half": function(1)});
    for (index, test) in tests.iter().enumerate() {
        let (judgement, sent) = run(&mut started, index, names.clone(), &mut |message| {
            value(if message["f"]["h"] == 0 {
                json!(4)
            } else {
                json!(1.5)
            })
        });
        assert_eq!(
            judgement.outcome,
            RefereeOutcome::Pass,
            "{}: {judgement:?}",
            test
        );
        assert_eq!(sent.len(), 1, "{}: {sent:?}", test);
    }
}

#[test]
fn a_tests_class_body_reads_names_as_python_does() {
    // A class body reads its globals without the namespace's lookup (CPython's LOAD_NAME): the
    // referee rewrites those reads, so the solution's names, a default argument evaluated in
    // the class body, a comprehension's first iterable and the class's own names all resolve
    // as exec(prelude + solution + test) would.
    let tests = [
        "class T:\n    s = half(3)\nassert T.s == 1.5",
        "class T:\n    def m(self, x=half(3)):\n        return x\nassert T().m() == 1.5",
        "class T:\n    xs = [v + 1 for v in [half(3)]]\nassert T.xs == [2.5]",
        "value = 1\nclass T:\n    value = value + 1\n    twice = value * 2\nassert (T.value, T.twice, value) == (2, 4, 1)",
        "class T:\n    s = not_defined_anywhere\n",
    ];
    let mut started = start(&tests);
    let names = json!({"half": function(1)});
    for (index, test) in tests.iter().enumerate().take(4) {
        let (judgement, _) = run(&mut started, index, names.clone(), &mut |_| {
            value(json!(1.5))
        });
        assert_eq!(
            judgement.outcome,
            RefereeOutcome::Pass,
            "{}: {judgement:?}",
            test
        );
    }
    let (judgement, _) = run(&mut started, 4, names, &mut |message| panic!("{message}"));
    assert_eq!(judgement.outcome, RefereeOutcome::Error, "{judgement:?}");
    assert!(
        judgement
            .detail
            .contains("NameError: name 'not_defined_anywhere' is not defined"),
        "{judgement:?}"
    );
}

#[test]
fn a_prompt_function_named_like_a_prelude_import_must_be_the_solutions() {
    let mut started = start(&["assert gcd(4, 6) == 7"]);
    // Not defined by the solution: the prelude's gcd (which gives 2) never answers.
    let (judgement, sent) = run(&mut started, 0, json!({}), &mut |message| {
        panic!("{message}")
    });
    assert_eq!(judgement.outcome, RefereeOutcome::Error, "{judgement:?}");
    assert!(sent.is_empty());
    let (judgement, _) = run(&mut started, 0, json!({"gcd": function(0)}), &mut |_| {
        value(json!(7))
    });
    assert_eq!(judgement.outcome, RefereeOutcome::Pass, "{judgement:?}");
}

#[test]
fn builtins_and_the_preludes_helpers_stay_the_referees() {
    let tests = [
        "assert is_same_list(reverse(list_node([1, 2])), list_node([2, 1]))",
        "assert len(items()) == 3",
        "assert np.allclose(half(3), 1.5)",
    ];
    let mut started = start(&tests);
    // The solution claims helpers and builtins of the same names: never used.
    let names = json!({"reverse": function(0), "is_same_list": function(1), "len": function(2),
                       "items": function(3), "np": function(4), "half": function(5)});
    let mut reverse = |message: &Value| {
        assert_eq!(message["f"]["h"], 0, "{message}");
        // A list node of the referee's own class, as data: [2, 1].
        json!({"t": "return", "v": {"r": 0}, "tab": [
            ["object", "ListNode", ["val", 2, "next", {"r": 1}]],
            ["object", "ListNode", ["val", 1, "next", null]]]})
    };
    assert_eq!(
        run(&mut started, 0, names.clone(), &mut reverse).0.outcome,
        RefereeOutcome::Pass
    );
    let (judgement, _) = run(&mut started, 1, names.clone(), &mut |message| {
        assert_eq!(message["f"]["h"], 3, "{message}");
        json!({"t": "return", "v": {"r": 0}, "tab": [["list", [1, 2]]]})
    });
    assert_eq!(
        judgement.outcome,
        RefereeOutcome::Fail,
        "the referee's len: {judgement:?}"
    );
    let (judgement, _) = run(&mut started, 2, names, &mut |message| {
        assert_eq!(message["f"]["h"], 5, "{message}");
        value(json!(0))
    });
    assert_eq!(
        judgement.outcome,
        RefereeOutcome::Fail,
        "the referee's numpy: {judgement:?}"
    );
}

#[test]
fn a_broken_or_ended_child_fails_the_test_whatever_the_test_catches() {
    let tests = [
        "try:\n    square(2)\nexcept Exception:\n    pass",
        "assert square(2) == 4",
        "assert square(2) == 4",
    ];
    let mut started = start(&tests);
    let names = json!({"square": function(0)});
    // Garbage instead of an answer.
    let (judgement, _) = run(
        &mut started,
        0,
        names.clone(),
        &mut |_| json!({"t": "return", "v": {"bogus": 1}}),
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Ended, "{judgement:?}");
    assert!(judgement.forged, "{judgement:?}");
    // An answer to a request that was never asked.
    let (judgement, _) = run(
        &mut started,
        1,
        names.clone(),
        &mut |_| json!({"t": "return", "id": 99, "v": 4}),
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Ended, "{judgement:?}");
    assert!(judgement.forged, "{judgement:?}");
    // The engine says the child ended.
    let deadline = Instant::now() + Duration::from_secs(20);
    let referee = &mut started.referee;
    referee.begin_test(2, deadline).unwrap();
    let ready = json!({"t": "ready", "names": names});
    referee
        .deliver(
            &Referee::message_frame(ready.to_string().as_bytes()),
            deadline,
        )
        .unwrap();
    let Event::Send(_) = referee.next_event(deadline).unwrap() else {
        panic!("a call first")
    };
    referee
        .deliver(
            &Referee::ended_frame("the solution's process exited with status 0"),
            deadline,
        )
        .unwrap();
    let Event::Verdict(judgement) = referee.next_event(deadline).unwrap() else {
        panic!("a verdict")
    };
    assert_eq!(judgement.outcome, RefereeOutcome::Ended, "{judgement:?}");
    // A child that ended is not a forgery.
    assert!(!judgement.forged, "{judgement:?}");
}

#[test]
fn a_test_that_does_not_compile_is_an_error_not_a_failed_job() {
    let mut started = start(&["assert (", "assert square(2) == 4"]);
    let (judgement, sent) = run(&mut started, 0, json!({}), &mut |message| {
        panic!("{message}")
    });
    assert_eq!(judgement.outcome, RefereeOutcome::Error);
    assert!(
        judgement.detail.contains("does not compile"),
        "{judgement:?}"
    );
    assert!(sent.is_empty());
    let (judgement, _) = run(
        &mut started,
        1,
        json!({"square": function(0)}),
        &mut honest_square,
    );
    assert_eq!(judgement.outcome, RefereeOutcome::Pass);
}

#[test]
fn an_instance_the_test_built_has_its_truth_only_once_used_and_never_a_plain_values_predicates() {
    let tests = [
        "assert is_prime(7)",
        "assert greet('bob').startswith('Hello')",
        "s = Stack()\ns.push(1)\nassert s",
    ];
    let mut started = start(&tests);
    let names = json!({"is_prime": class(0, &["__bool__"]), "greet": class(1, &["startswith"]),
                       "Stack": class(2, &["push", "__len__"])});
    let mut next = 10;
    let mut script = |message: &Value| match message["t"].as_str().unwrap() {
        "call" => {
            next += 1;
            json!({"t": "return", "v": {"h": next}, "tab": [], "handles": {next.to_string(): 1}})
        }
        "method" => value(json!(null)),
        "op" => {
            assert_eq!(message["n"], "bool", "{message}");
            value(json!(true))
        }
        other => panic!("unexpected {other}: {message}"),
    };
    for (index, expected) in [
        (0, RefereeOutcome::Fail),
        (1, RefereeOutcome::Fail),
        (2, RefereeOutcome::Pass),
    ] {
        let (judgement, sent) = run(&mut started, index, names.clone(), &mut script);
        assert_eq!(
            judgement.outcome, expected,
            "{}: {judgement:?}",
            tests[index]
        );
        if index < 2 {
            // Refused here: nothing but the construction reached the child.
            assert_eq!(sent.len(), 1, "{sent:?}");
        }
    }
}
