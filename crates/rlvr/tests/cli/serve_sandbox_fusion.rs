//! Issue 35: `rlvr serve`'s `/run_code` as a drop-in for SandboxFusion's. Java runs with
//! assertions on there (`java -ea`, as SandboxFusion runs it) and without on the judge's stdin
//! path; the libraries SandboxFusion's image ships (`org.javatuples`, `lodash`) are there for
//! both.

use serde_json::{Value, json};

use crate::support::Served;

/// `POST /run_code` of `body`, answered 200.
fn run_code(served: &Served, body: &Value) -> Value {
    let response = served.post("/run_code", body);
    assert_eq!(response.status, 200, "{body}: {}", response.body);
    response.json()
}

/// A judge job of `source` in a `tag` fence: one a+b test.
fn sum_job(id: &str, tag: &str, source: &str) -> Value {
    json!({
        "id": id,
        "response": format!("<think>\nsolving\n</think>\n```{tag}\n{source}\n```"),
        "ground_truth": {"inputs": ["20 22\n"], "outputs": ["42\n"]},
    })
}

/// Each job's score through `POST /v1/verify`, in job order.
fn judge_scores(served: &Served, jobs: &[Value]) -> Vec<Value> {
    let response = served.post("/v1/verify", &json!({"time_limit": 10, "jobs": jobs}));
    assert_eq!(response.status, 200, "{}", response.body);
    response.json()["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|result| {
            assert_eq!(result["status"], "ok", "{result}");
            result["score"].clone()
        })
        .collect()
}

const JAVA_FAILING_ASSERT: &str = "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); long a = s.nextLong(), b = s.nextLong(); assert a + b < 0 : \"a debugging check\"; System.out.println(a + b); } }\n";
const JAVA_HOLDING_ASSERT: &str = "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); long a = s.nextLong(), b = s.nextLong(); assert a + b == 42; System.out.println(a + b); } }\n";

#[test]
fn issue_35_serve_java_asserts_in_run_code_and_not_in_the_judge() {
    let served = Served::start(&["--workers", "2"]);
    // SandboxFusion's `java -ea`: a failing `assert` fails the run, as there.
    let failing = run_code(
        &served,
        &json!({"language": "java", "code": JAVA_FAILING_ASSERT, "stdin": "20 22\n", "compile_timeout": 60}),
    );
    assert_eq!(failing["status"], "Failed", "{failing}");
    assert_eq!(failing["compile_result"]["return_code"], 0, "{failing}");
    assert_eq!(failing["run_result"]["status"], "Finished", "{failing}");
    assert_eq!(failing["run_result"]["return_code"], 1, "{failing}");
    assert_eq!(failing["run_result"]["stdout"], "", "{failing}");
    let stderr = failing["run_result"]["stderr"].as_str().expect("stderr");
    assert!(
        stderr.contains("java.lang.AssertionError: a debugging check"),
        "{stderr}"
    );
    // Honest control: an assertion that holds changes nothing.
    let holding = run_code(
        &served,
        &json!({"language": "java", "code": JAVA_HOLDING_ASSERT, "stdin": "20 22\n", "compile_timeout": 60}),
    );
    assert_eq!(holding["status"], "Success", "{holding}");
    assert_eq!(holding["run_result"]["stdout"], "42\n", "{holding}");

    // The judge runs Java as competitive judges do, without -ea: the failing assertion is
    // not evaluated and the right answer scores 1.0, as `java Main` would give it.
    assert_eq!(
        judge_scores(
            &served,
            &[
                sum_job("failing", "java", JAVA_FAILING_ASSERT),
                sum_job("holding", "java", JAVA_HOLDING_ASSERT),
            ]
        ),
        [json!(1.0), json!(1.0)]
    );
}

const JAVA_TUPLES: &str = "import java.util.*;\nimport org.javatuples.Pair;\nimport org.javatuples.Triplet;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); Pair<Long, Long> p = Pair.with(s.nextLong(), s.nextLong()); Triplet<String, Long, Double> t = Triplet.with(\"sum\", p.getValue0() + p.getValue1(), 0.5); System.out.println(t.getValue1()); } }\n";
const NODE_LODASH: &str = "const _ = require('lodash');\nconst numbers = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(_.sum(numbers));\n";

#[test]
fn issue_35_serve_javatuples_and_lodash_are_there_for_run_code_and_the_judge() {
    let served = Served::start(&["--workers", "2"]);
    for (language, code) in [("java", JAVA_TUPLES), ("nodejs", NODE_LODASH)] {
        let answer = run_code(
            &served,
            &json!({"language": language, "code": code, "stdin": "20 22\n", "compile_timeout": 60}),
        );
        assert_eq!(answer["status"], "Success", "{language}: {answer}");
        assert_eq!(
            answer["run_result"]["stdout"], "42\n",
            "{language}: {answer}"
        );
    }
    // A library that is not installed is still a failure, not a crash: the same programs
    // naming a package nobody ships.
    let missing_java = run_code(
        &served,
        &json!({"language": "java", "code": JAVA_TUPLES.replace("org.javatuples", "org.nosuchtuples"), "compile_timeout": 60}),
    );
    assert_eq!(missing_java["status"], "Failed", "{missing_java}");
    assert_ne!(
        missing_java["compile_result"]["return_code"], 0,
        "{missing_java}"
    );
    assert_eq!(missing_java["run_result"], Value::Null, "{missing_java}");
    let missing_node = run_code(
        &served,
        &json!({"language": "nodejs", "code": NODE_LODASH.replace("lodash", "no-such-module")}),
    );
    assert_eq!(missing_node["status"], "Failed", "{missing_node}");
    assert!(
        missing_node["run_result"]["stderr"]
            .as_str()
            .is_some_and(|stderr| stderr.contains("Cannot find module 'no-such-module'")),
        "{missing_node}"
    );
    // The judge's path sees them too (warm JVM, fresh JVM via the same class path).
    assert_eq!(
        judge_scores(
            &served,
            &[
                sum_job("tuples", "java", JAVA_TUPLES),
                sum_job("lodash", "javascript", NODE_LODASH),
            ]
        ),
        [json!(1.0), json!(1.0)]
    );
}
