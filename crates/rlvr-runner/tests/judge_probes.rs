//! The runner's judge additions against a real interpreter (issue 12): split functional tests
//! evaluate only the solution's calls and report their values as plain data, and the tamper
//! sensor reports what the solution tried. Isolation is the sandbox's job, tested there.

mod common;

use common::{LIMITS, start};
use rlvr_runner::JudgeOptions;
use serde_json::{Value, json};

const PRELUDE: &str = "from math import gcd\nclass TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n        self.val = val\n        self.left = left\n        self.right = right\n";

fn probes(spec: &Value, solution: &str) -> (rlvr_runner::TestReport, Value) {
    let (_child, mut runner) = start();
    runner
        .load(&[PRELUDE, solution], "solution.py", &[], None)
        .unwrap();
    let spec = spec.to_string();
    let report = runner
        .run_judge_test(
            b"",
            None,
            JudgeOptions {
                sensor: true,
                probes: Some(&spec),
                fresh_work_directory: None,
            },
            LIMITS,
        )
        .unwrap();
    // The results are the child's to write: whatever they hold, they are data.
    let results = serde_json::from_slice(&report.results).unwrap_or(Value::Null);
    (report, results)
}

#[test]
fn only_the_probes_run_and_their_values_come_back_as_data() {
    let solution = "def double(x):\n    return [x, x]\ndef boom():\n    raise KeyError('k')\nclass Always:\n    def __eq__(self, other):\n        return True\ndef liar():\n    return Always()\ndef tree():\n    return TreeNode(1, TreeNode(2))";
    let spec = json!({
        "probes": [
            {"source": "double(n)", "inputs": [["n", 21]]},
            {"source": "boom()"},
            {"source": "liar()"},
            {"source": "tree()"},
        ],
        "table": [],
        "classes": ["TreeNode"],
    });
    let (report, results) = probes(&spec, solution);
    assert_eq!((report.exit_code, report.completed), (Some(0), true));
    let outcomes = results["results"].as_array().unwrap();
    assert_eq!(outcomes[0][0], "value");
    let table = results["table"].as_array().unwrap();
    let list = &table[outcomes[0][1]["r"].as_u64().unwrap() as usize];
    assert_eq!(list, &json!(["list", [21, 21]]));
    assert_eq!(outcomes[1], json!(["raised", "KeyError", "'k'"]));
    assert_eq!(outcomes[2][0], "unencodable", "{outcomes:?}");
    let tree = &table[outcomes[3][1]["r"].as_u64().unwrap() as usize];
    assert_eq!(tree[0], "object");
    assert_eq!(tree[1], "TreeNode");
}

#[test]
fn inputs_results_and_snapshots_follow_the_probes_in_order() {
    let solution = "def rotate(nums, k):\n    nums[:] = nums[-k:] + nums[:-k]\ndef encode(s):\n    return s[::-1]\ndef decode(s):\n    return s[::-1]";
    let spec = json!({
        "probes": [
            {"source": "rotate(nums, 1)", "inputs": [["nums", {"r": 0}]], "snapshot": ["nums"]},
            {"source": "encode(text)", "inputs": [["text", "abc"]], "assign": "encoded"},
            {"source": "decode(encoded)"},
        ],
        "table": [["list", [1, 2, 3]]],
    });
    let (report, results) = probes(&spec, solution);
    assert!(report.completed);
    assert_eq!(results["results"][1], json!(["value", "cba"]));
    assert_eq!(results["results"][2], json!(["value", "abc"]));
    let snapshot = &results["snapshots"][0][0];
    let table = results["table"].as_array().unwrap();
    assert_eq!(
        table[snapshot["r"].as_u64().unwrap() as usize],
        json!(["list", [3, 1, 2]])
    );
}

#[test]
fn a_prompt_function_named_like_a_prelude_import_must_be_the_solutions() {
    let spec = json!({"probes": [{"source": "gcd(4, 6)", "requires": [["gcd", "math", "gcd"]]}]});
    let (_, missing) = probes(&spec, "x = 1");
    assert_eq!(missing["results"][0][1], "NameError");
    let (_, defined) = probes(&spec, "def gcd(a, b):\n    return 7");
    assert_eq!(defined["results"][0], json!(["value", 7]));
}

#[test]
fn an_exit_inside_a_probe_leaves_no_results_and_the_run_incomplete() {
    let spec = json!({"probes": [{"source": "f()"}]});
    let (report, results) = probes(&spec, "import os\ndef f():\n    os._exit(0)");
    assert_eq!((report.exit_code, report.completed), (Some(0), false));
    assert_eq!(results, Value::Null);
    let (report, _) = probes(&spec, "import sys\ndef f():\n    sys.exit(0)");
    assert!(!report.completed);
}

#[test]
fn the_sensor_reports_what_the_solution_tried_once_per_kind() {
    let solution = "import sys, gc, os, inspect, collections\n\
        P = collections.namedtuple('P', 'a b')\n\
        def f():\n    frame = sys._getframe(1)\n    frame.f_code\n    gc.get_referrers(f)\n    sys.settrace(None)\n    inspect.currentframe()\n    try:\n        os.kill(os.getpid() + 1, 0)\n    except OSError:\n        pass\n    return 1";
    let spec = json!({"probes": [{"source": "f()"}, {"source": "f()"}]});
    let (report, _) = probes(&spec, solution);
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
fn an_honest_solution_using_the_standard_library_reports_nothing() {
    let solution = "import collections, enum, typing, dataclasses, traceback\n\
        P = collections.namedtuple('P', 'a b')\n\
        class Colour(enum.Enum):\n    RED = 1\n\
        @dataclasses.dataclass\nclass Point:\n    x: int\n\
        T = typing.TypeVar('T')\n\
        def f():\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        traceback.format_exc()\n    return P(1, 2).a + Point(3).x";
    let spec = json!({"probes": [{"source": "f()"}]});
    let (report, results) = probes(&spec, solution);
    assert_eq!(results["results"][0], json!(["value", 4]));
    assert!(report.tampering.is_empty(), "{:?}", report.tampering);
}

#[test]
fn a_child_scribbling_on_the_sensor_file_cannot_invent_kinds() {
    let solution = "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'nonsense\\nearly_exit\\n')\n    except OSError:\n        pass";
    let spec = json!({"probes": []});
    let (report, _) = probes(&spec, solution);
    assert!(report.tampering.is_empty(), "{:?}", report.tampering);
}
