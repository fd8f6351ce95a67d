//! A live test's child against a real interpreter (issue 22), the test playing the referee on
//! the live pipes: the child says which names the solution defines, then answers one call at
//! a time with data or handles, writes back what it changed in its arguments, calls the test
//! back, ends when told, and the tamper sensor reports what the solution tried. Isolation is the
//! sandbox's job, tested there; the referee's side is tested in its own crate.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};

use crate::common::LIMITS;
use command_fds::{CommandFdExt, FdMapping};
use rlvr_runner::{ChildReport, JudgeOptions, Runner};
use serde_json::{Value, json};

/// The referee's end of the live pipes a live test's child talks on (runner/live.py): the test
/// plays the referee, message by message.
pub struct LiveEnd {
    to_child: File,
    from_child: File,
}

impl LiveEnd {
    /// Sends one message to the child.
    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let mut framed = (body.len() as u32).to_le_bytes().to_vec();
        framed.extend_from_slice(&body);
        self.to_child.write_all(&framed).unwrap();
    }

    /// The child's next message.
    pub fn receive(&mut self) -> Value {
        let mut length = [0u8; 4];
        self.from_child.read_exact(&mut length).unwrap();
        let mut body = vec![0u8; u32::from_le_bytes(length) as usize];
        self.from_child.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// A request whose answer is read back (`id` added).
    pub fn ask(&mut self, mut message: Value, id: u64) -> Value {
        message["id"] = id.into();
        self.send(&message);
        let reply = self.receive();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }
}

/// A runner given the live pipes (descriptors 3 and 4, as the engine passes them), and the
/// test's end of them.
pub fn start_live() -> (Child, Runner, LiveEnd) {
    let (child_reads, to_child) = std::io::pipe().unwrap();
    let (from_child, child_writes) = std::io::pipe().unwrap();
    let mut command = Command::new(crate::common::python());
    command
        .args(rlvr_runner::interpreter_arguments())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .fd_mappings(vec![
            FdMapping {
                parent_fd: OwnedFd::from(child_reads),
                child_fd: 3,
            },
            FdMapping {
                parent_fd: OwnedFd::from(child_writes),
                child_fd: 4,
            },
        ])
        .unwrap();
    let mut child = command.spawn().expect("python starts");
    let requests = OwnedFd::from(child.stdin.take().unwrap());
    let responses = OwnedFd::from(child.stdout.take().unwrap());
    let live = LiveEnd {
        to_child: File::from(OwnedFd::from(to_child)),
        from_child: File::from(OwnedFd::from(from_child)),
    };
    (child, Runner::new(requests, responses), live)
}

const PRELUDE: &str = "from math import gcd\nclass TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n        self.val = val\n        self.left = left\n        self.right = right\n";

/// Starts a live test of `solution` and returns the child's first message (its names).
fn live_test(
    solution: &str,
) -> (
    std::process::Child,
    Runner,
    LiveEnd,
    std::time::Instant,
    Value,
) {
    let (child, mut runner, mut live) = start_live();
    let report = runner
        .load(&[PRELUDE, solution], "solution.py", &[], None)
        .unwrap();
    assert!(report.ok && report.compile_error.is_none(), "{report:?}");
    let deadline = runner
        .start_test(
            b"",
            None,
            JudgeOptions {
                sensor: true,
                live: true,
                fresh_work_directory: None,
            },
            LIMITS,
        )
        .unwrap();
    let ready = live.receive();
    assert_eq!(ready["t"], "ready", "{ready}");
    (child, runner, live, deadline, ready)
}

fn handle(ready: &Value, name: &str) -> Value {
    let described = &ready["names"][name];
    assert_eq!(described[0], "callable", "{ready}");
    described[1].clone()
}

fn end(runner: &mut Runner, live: &mut LiveEnd, deadline: std::time::Instant) -> ChildReport {
    live.send(&json!({"t": "end"}));
    runner.finish_test(deadline).unwrap()
}

/// The value a reply holds, resolved against its table (one level).
fn resolved(reply: &Value) -> Value {
    match reply["v"].get("r").and_then(Value::as_u64) {
        Some(index) => reply["tab"][index as usize].clone(),
        None => reply["v"].clone(),
    }
}

#[test]
fn names_first_then_one_call_at_a_time_with_data_or_handles() {
    let solution = "import math as m\nVALUE = 5\ndef double(x):\n    return [x, x]\ndef boom():\n    raise KeyError('k')\ndef liar():\n    class Always:\n        def __eq__(self, other):\n            return True\n        def shout(self):\n            return 'yes'\n    return Always()\ndef tree():\n    return TreeNode(1, TreeNode(2))";
    let (_child, mut runner, mut live, deadline, ready) = live_test(solution);
    // The prelude's own names are not the solution's; its module alias and value are named.
    let names = ready["names"].as_object().unwrap();
    assert!(!names.contains_key("gcd") && !names.contains_key("TreeNode"));
    assert_eq!(ready["names"]["m"], json!(["module", "math"]));
    assert_eq!(ready["names"]["VALUE"], json!(["value"]));
    let double = handle(&ready, "double");
    let reply = live.ask(
        json!({"t": "call", "f": double, "a": [21], "k": [], "tab": []}),
        1,
    );
    assert_eq!(resolved(&reply), json!(["list", [21, 21]]));
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "boom"), "a": [], "k": [], "tab": []}),
        2,
    );
    assert_eq!(
        (reply["t"].clone(), reply["type"].clone()),
        (json!("raise"), json!("KeyError"))
    );
    // The exception itself crosses too: its class by name and its exact arguments.
    assert_eq!(
        resolved(&reply),
        json!(["exception", {"bi": "KeyError"}, ["k"], [], "'k'"])
    );
    // An instance of the solution's class: a record (its class name and attributes, with its
    // handle), its type's methods named once, never its `__eq__`'s answer (issue 32).
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "liar"), "a": [], "k": [], "tab": []}),
        3,
    );
    let record = resolved(&reply);
    assert_eq!(
        (record[0].clone(), record[1].clone(), record[3].clone()),
        (json!("record"), json!("Always"), json!([])),
        "{reply}"
    );
    let liar = json!({"h": record[2]});
    let type_number = reply["handles"][record[2].to_string()].clone();
    assert_eq!(reply["types"][type_number.to_string()], json!(["shout"]));
    let reply = live.ask(
        json!({"t": "method", "o": liar, "n": "shout", "a": [], "k": [], "tab": []}),
        4,
    );
    assert_eq!(reply["v"], "yes");
    // Instances of the classes the referee names cross as their attributes.
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "tree"), "a": [], "k": [], "tab": [], "cls": ["TreeNode"]}),
        5,
    );
    let tree = resolved(&reply);
    assert_eq!(
        (tree[0].clone(), tree[1].clone()),
        (json!("object"), json!("TreeNode"))
    );
    let reply = live.ask(json!({"t": "global", "n": "VALUE"}), 6);
    assert_eq!(reply["v"], 5);
    let report = end(&mut runner, &mut live, deadline);
    assert_eq!(report.exit_code, Some(0), "{report:?}");
    assert!(!report.aborted);
}

#[test]
fn what_a_call_changes_in_its_arguments_comes_back_and_identity_is_kept() {
    let solution = "def rotate(nums, k):\n    nums[:] = nums[-k:] + nums[:-k]\ndef same(items):\n    items.append(0)\n    return items";
    let (_child, mut runner, mut live, deadline, ready) = live_test(solution);
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "rotate"), "a": [{"r": 0}, 1], "k": [], "tab": [["list", [1, 2, 3]]]}),
        1,
    );
    assert_eq!(reply["v"], Value::Null);
    let back = &reply["back"][0];
    assert_eq!(back[0], 0, "the first argument's state");
    let index = back[1]["r"].as_u64().unwrap() as usize;
    assert_eq!(reply["tab"][index], json!(["list", [3, 1, 2]]));
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "same"), "a": [{"r": 0}], "k": [], "tab": [["list", [5]]]}),
        2,
    );
    assert_eq!(
        reply["same"], 0,
        "the value returned is the argument itself: {reply}"
    );
    assert_eq!(end(&mut runner, &mut live, deadline).exit_code, Some(0));
}

#[test]
fn the_solution_calls_the_test_back_and_uses_the_builtins_it_names() {
    let solution = "def apply(f, x):\n    return f(x) + 1\ndef arrange(items, key):\n    return sorted(items, key=key)";
    let (_child, mut runner, mut live, deadline, ready) = live_test(solution);
    live.send(&json!({"t": "call", "id": 1, "f": handle(&ready, "apply"), "a": [{"x": 0}, 3], "k": [], "tab": []}));
    let callback = live.receive();
    assert_eq!(callback["t"], "call");
    assert_eq!(callback["f"], json!({"x": 0}));
    assert_eq!(callback["a"], json!([3]));
    live.send(&json!({"t": "return", "id": callback["id"], "v": 30, "tab": []}));
    let reply = live.receive();
    assert_eq!(
        (reply["id"].clone(), reply["v"].clone()),
        (json!(1), json!(31))
    );
    // `key=len` is sent by name: the child uses its own, with no call back.
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "arrange"), "a": [{"r": 0}], "k": [["key", {"bi": "len"}]],
               "tab": [["list", ["ccc", "a", "bb"]]]}),
        2,
    );
    assert_eq!(resolved(&reply), json!(["list", ["a", "bb", "ccc"]]));
    assert_eq!(end(&mut runner, &mut live, deadline).exit_code, Some(0));
}

#[test]
fn a_generator_is_a_handle_read_in_batches_never_drained() {
    let solution = "def naturals():\n    n = 0\n    while True:\n        yield n\n        n += 1";
    let (_child, mut runner, mut live, deadline, ready) = live_test(solution);
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "naturals"), "a": [], "k": [], "tab": []}),
        1,
    );
    let generator = reply["v"].clone();
    assert!(generator.get("h").is_some(), "{reply}");
    let reply = live.ask(json!({"t": "next", "o": generator, "count": 5}), 2);
    assert_eq!(
        (reply["v"].clone(), reply["done"].clone()),
        (json!([0, 1, 2, 3, 4]), json!(false))
    );
    assert_eq!(end(&mut runner, &mut live, deadline).exit_code, Some(0));
}

#[test]
fn an_exit_inside_a_call_ends_the_child_without_an_answer() {
    for body in ["import sys\n    sys.exit(0)", "import os\n    os._exit(0)"] {
        let solution = format!("def f():\n    {body}");
        let (_child, mut runner, mut live, deadline, ready) = live_test(&solution);
        live.send(
            &json!({"t": "call", "id": 1, "f": handle(&ready, "f"), "a": [], "k": [], "tab": []}),
        );
        let report = runner.finish_test(deadline).unwrap();
        assert_eq!(report.exit_code, Some(0), "{body}: {report:?}");
    }
}

#[test]
fn the_engine_can_abort_a_live_test() {
    let (_child, mut runner, _live, deadline, _ready) = live_test("def f():\n    return 1");
    runner.abort().unwrap();
    let report = runner.finish_test(deadline).unwrap();
    assert!(report.aborted, "{report:?}");
    assert!(report.wall_ms < 4_000.0, "{report:?}");
}

#[test]
fn the_sensor_counts_what_the_solution_tried_but_not_honest_introspection() {
    let solution = "import sys, gc, os, inspect\n\
        def f():\n    frame = sys._getframe(1)\n    gc.get_referrers(f)\n    sys.settrace(lambda *a: None)\n    sys.settrace(None)\n    try:\n        os.kill(os.getpid() + 1, 0)\n    except OSError:\n        pass\n    return 1\n\
        def honest(x):\n    sys.settrace(None)\n    return str(inspect.signature(honest))";
    let (_child, mut runner, mut live, deadline, ready) = live_test(solution);
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "honest"), "a": [1], "k": [], "tab": []}),
        1,
    );
    assert_eq!(reply["v"], "(x)");
    let report = end(&mut runner, &mut live, deadline);
    assert!(report.tampering.is_empty(), "{:?}", report.tampering);
    let (_child, mut runner, mut live, deadline, ready) = live_test(solution);
    live.ask(
        json!({"t": "call", "f": handle(&ready, "f"), "a": [], "k": [], "tab": []}),
        1,
    );
    let report = end(&mut runner, &mut live, deadline);
    assert_eq!(
        report.tampering,
        [
            "frame_introspection",
            "gc_introspection",
            "signal",
            "tracing"
        ]
    );
}

#[test]
fn malformed_requests_are_answered_as_the_solutions_error_not_a_crash() {
    let (_child, mut runner, mut live, deadline, ready) = live_test("def f(x):\n    return x");
    let reply = live.ask(
        json!({"t": "call", "f": {"h": 999}, "a": [], "k": [], "tab": []}),
        1,
    );
    assert_eq!(reply["t"], "raise");
    let reply = live.ask(
        json!({"t": "call", "f": handle(&ready, "f"), "a": [{"r": 7}], "k": [], "tab": []}),
        2,
    );
    assert_eq!(reply["t"], "raise");
    assert_eq!(end(&mut runner, &mut live, deadline).exit_code, Some(0));
}

#[test]
fn a_runner_without_the_live_pipes_refuses_live_tests() {
    let (_child, mut runner) = crate::common::start();
    runner.load(&["x = 1"], "solution.py", &[], None).unwrap();
    let report = runner
        .run_judge_test(
            b"",
            None,
            JudgeOptions {
                sensor: false,
                live: true,
                fresh_work_directory: None,
            },
            LIMITS,
        )
        .unwrap();
    assert_eq!(report.exit_code, Some(1));
    assert!(String::from_utf8_lossy(&report.stderr).contains("no live channel"));
}
