//! Metrics for operators (issue 34): the metrics-only port (`--metrics-listen`) serves
//! `/metrics` and `/health` without the token and refuses every verification route, and the
//! Grafana dashboard (`deploy/grafana/rlvr-serve.json`) renders from a real server's scrapes:
//! every metric its queries name is in the exposition, and each panel's value is what the jobs
//! sent should give.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::promql::{self, Scrape, Window};
use crate::support::{Served, wait_until};

fn fenced(code: &str) -> String {
    format!("```python\n{code}\n```")
}

fn doubling(code: &str) -> Value {
    json!({
        "response": fenced(code),
        "ground_truth": {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]},
    })
}

fn token_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().expect("token file");
    std::fs::write(file.path(), "metrics-test-token\n").expect("token written");
    file
}

#[test]
fn issue_34_the_metrics_port_serves_metrics_without_the_token_and_refuses_verification() {
    let token = token_file();
    let served = Served::start_with_metrics_port(&[
        "--workers",
        "1",
        "--token-file",
        token.path().to_str().unwrap(),
    ]);
    // The main port is unchanged: the token is needed for /metrics and verification there.
    assert_eq!(served.get("/metrics").status, 401);
    let body = json!({"jobs": [doubling("print(int(input()) * 2)")]}).to_string();
    let authorized = [("Authorization", "Bearer metrics-test-token")];
    let answer = served.request("POST", "/v1/verify", &authorized, body.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["results"][0]["score"], 1.0);

    let metrics = served.get_metrics_port("/metrics");
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    assert!(
        metrics
            .header("content-type")
            .is_some_and(|value| value.starts_with("text/plain")),
        "{:?}",
        metrics.headers
    );
    let scrape = Scrape::parse(&metrics.body);
    let value = |name: &str| {
        scrape
            .samples
            .iter()
            .find(|sample| sample.name == name)
            .map(|sample| sample.value)
    };
    assert_eq!(value("rlvr_jobs_total"), Some(1.0), "{}", metrics.body);
    assert_eq!(value("rlvr_workers"), Some(1.0), "{}", metrics.body);
    let health = served.get_metrics_port("/health");
    assert_eq!(
        (health.status, health.json()),
        (200, json!({"status": "healthy"}))
    );

    // Verification is not served on the metrics port, with or without the token.
    let address = served.metrics_address.clone().unwrap();
    for (method, path) in [
        ("POST", "/v1/verify"),
        ("POST", "/run_code"),
        ("POST", "/test_program"),
        ("POST", "/test_program_stdio"),
        ("POST", "/get_reward"),
        ("GET", "/v1/ping"),
    ] {
        for headers in [&[][..], &authorized[..]] {
            let refused =
                crate::support::served::request(&address, method, path, headers, body.as_bytes());
            assert_eq!(refused.status, 404, "{method} {path}: {}", refused.body);
            assert!(
                refused.json()["error"]
                    .as_str()
                    .unwrap()
                    .contains("metrics-only port"),
                "{}",
                refused.body
            );
        }
    }
    // Nothing was scored through the metrics port, and its requests are not counted as
    // trainer traffic.
    let after = Scrape::parse(&served.get_metrics_port("/metrics").body);
    let jobs = after
        .samples
        .iter()
        .find(|sample| sample.name == "rlvr_jobs_total")
        .map(|sample| sample.value);
    assert_eq!(jobs, Some(1.0));
    assert!(
        after
            .samples
            .iter()
            .filter(|sample| sample.name == "rlvr_requests_total")
            .all(|sample| sample.labels["route"] == "/v1/verify"
                || sample.labels["route"] == "/metrics"),
        "only the main port's requests are counted"
    );
}

/// What the responses of the test's requests say: the expected panel values.
#[derive(Debug, Default)]
struct Expected {
    verdicts: BTreeMap<String, f64>,
    tampering: f64,
    checker_errors: f64,
    checker_rejected: f64,
    sandbox_errors: f64,
    jobs: f64,
}

impl Expected {
    fn add(&mut self, answer: &Value) {
        for result in answer["results"].as_array().expect("results") {
            self.jobs += 1.0;
            for test in result["tests"].as_array().into_iter().flatten() {
                let verdict = test["verdict"].as_str().expect("a verdict").to_owned();
                *self.verdicts.entry(verdict).or_default() += 1.0;
            }
            if let Some(kinds) = result["tampering"].as_object() {
                self.tampering += kinds.values().filter_map(Value::as_f64).sum::<f64>();
            }
            match result["status"].as_str() {
                Some("checker_error") => self.checker_errors += 1.0,
                Some("sandbox_error") => self.sandbox_errors += 1.0,
                _ => {}
            }
            self.checker_rejected += result["checker_rejected"].as_f64().unwrap_or(0.0);
        }
    }
}

/// Each panel's series rendered over `window`: `(panel title, legend, value)`.
fn render(dashboard: &Value, window: Window<'_>) -> Vec<(String, String, f64)> {
    let mut rendered = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        let title = panel["title"].as_str().expect("a title");
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("an expr");
            let query = promql::parse(expr).unwrap_or_else(|error| panic!("{title}: {error}"));
            let series = query.evaluate(window);
            assert!(!series.is_empty(), "{title}: {expr} gives no series");
            for (labels, value) in series {
                let mut legend = target["legendFormat"].as_str().unwrap_or("").to_owned();
                for (label, text) in &labels {
                    legend = legend.replace(&format!("{{{{{label}}}}}"), text);
                }
                assert!(
                    !legend.contains("{{"),
                    "{title}: {legend} names a label not kept"
                );
                rendered.push((title.to_owned(), legend, value));
            }
        }
    }
    rendered
}

/// One panel series' value; the test fails when the panel does not show it.
fn shown(rendered: &[(String, String, f64)], title: &str, legend: &str) -> f64 {
    rendered
        .iter()
        .find(|(panel, series, _)| panel == title && series == legend)
        .map(|(_, _, value)| *value)
        .unwrap_or_else(|| panic!("{title} / {legend} in {rendered:?}"))
}

fn scrape(served: &Served) -> (Scrape, Instant) {
    let response = served.get_metrics_port("/metrics");
    assert_eq!(response.status, 200, "{}", response.body);
    (Scrape::parse(&response.body), Instant::now())
}

fn gauge(scrape: &Scrape, name: &str) -> f64 {
    scrape
        .samples
        .iter()
        .find(|sample| sample.name == name)
        .map_or(f64::NAN, |sample| sample.value)
}

/// Rates over the window times its length: the counts the jobs should have added.
fn count(rendered: &[(String, String, f64)], title: &str, legend: &str, seconds: f64) -> f64 {
    (shown(rendered, title, legend) * seconds * 1000.0).round() / 1000.0
}

/// The dashboard as committed.
fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana/rlvr-serve.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the dashboard"))
        .expect("the dashboard is JSON")
}

/// The first scrape for which `condition` holds, and when it was taken.
fn scrape_when(
    served: &Served,
    what: &str,
    condition: impl Fn(&Scrape) -> bool,
) -> (Scrape, Instant) {
    let mut found = None;
    let held = wait_until(Duration::from_secs(60), || {
        let (now, at) = scrape(served);
        let holds = condition(&now);
        if holds {
            found = Some((now, at));
        }
        holds
    });
    assert!(held, "{what}");
    found.expect("the scrape")
}

/// Jobs whose verdicts, tampering and checker outcomes the responses spell out.
fn send_mixed_jobs(served: &Served, expected: &mut Expected) {
    let broken_checker = "def check(input, output, expected):\n    raise ValueError('broken')\n";
    let strict_checker = "def check(input, output, expected):\n    assert output.split() == expected.split()\n    return 1.0\n";
    let mixed = json!({"details": true, "time_limit": 5, "jobs": [
        doubling("print(int(input()) * 2)"),
        doubling("print(3)"),
        doubling("import sys\nframe = sys._getframe(0)\nprint(int(input()) * 2)"),
        {"response": fenced("print(5)"), "ground_truth": {"inputs": ["5\n"], "outputs": ["5\n"], "checker": broken_checker}},
        {"response": fenced("print(9)"), "ground_truth": {"inputs": ["5\n"], "outputs": ["5\n"], "checker": strict_checker}},
    ]});
    expected.add(&served.post_ok("/v1/verify", &mixed));
}

/// Five slow jobs fill the queue (`--max-queue 5`) and both workers; a sixth job is refused
/// (429). Returns the scrape taken while the queue was full.
fn fill_the_queue(served: &Served, expected: &mut Expected) -> (Scrape, Instant) {
    let slow = json!({"details": true, "time_limit": 10, "jobs": (0..5).map(|_| json!({
        "response": fenced("import time\ntime.sleep(1.5)\nprint(int(input()) * 2)"),
        "ground_truth": {"inputs": ["2\n"], "outputs": ["4\n"]},
    })).collect::<Vec<_>>()});
    let address = served.address.clone();
    let held = std::thread::spawn(move || {
        let response = crate::support::served::request(
            &address,
            "POST",
            "/v1/verify",
            &[],
            slow.to_string().as_bytes(),
        );
        assert_eq!(response.status, 200, "{}", response.body);
        response.json()
    });
    let middle = scrape_when(served, "both workers busy with the queue full", |now| {
        gauge(now, "rlvr_workers_busy") == 2.0
            && gauge(now, "rlvr_queue_depth") == 5.0
            && gauge(now, "rlvr_engine_queued") == 2.0
    });
    let refused = served.post("/v1/verify", &json!({"jobs": [doubling("print(1)")]}));
    assert_eq!(refused.status, 429, "{}", refused.body);
    expected.add(&held.join().expect("the slow request"));
    middle
}

/// Every metric name a query uses is in the exposition: those the parser reads, and every
/// `rlvr_` name in the text of the queries, found without the parser.
fn assert_every_queried_metric_is_exported(dashboard: &Value, last: &Scrape) {
    let mut names = Vec::new();
    for target in dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|panel| panel["targets"].as_array().unwrap())
    {
        let expr = target["expr"].as_str().unwrap();
        names.extend(
            promql::parse(expr)
                .expect("a query the evaluator reads")
                .metric_names(),
        );
        names.extend(
            expr.split(|character: char| !(character.is_ascii_alphanumeric() || character == '_'))
                .filter(|word| word.starts_with("rlvr_"))
                .map(str::to_owned),
        );
    }
    names.sort();
    names.dedup();
    assert!(names.len() >= 20, "{names:?}");
    for name in &names {
        assert!(
            last.has(name),
            "the dashboard reads {name}, which the server does not export"
        );
    }
}

/// The rendered panels as a Markdown table: over the whole run, and with the queue full.
fn table(rendered: &[(String, String, f64)], rendered_held: &[(String, String, f64)]) -> String {
    let mut table = String::from(
        "| panel | series | over the run | with the queue full |\n|---|---|---|---|\n",
    );
    for (title, legend, value) in rendered {
        let held_value = rendered_held
            .iter()
            .find(|(panel, series, _)| panel == title && series == legend)
            .map_or(String::from("-"), |(_, _, value)| format!("{value:.4}"));
        let _ = writeln!(table, "| {title} | {legend} | {value:.4} | {held_value} |");
    }
    table
}

#[test]
fn issue_34_the_dashboard_renders_from_metrics_a_test_run_produced() {
    let dashboard = dashboard();
    let served = Served::start_with_metrics_port(&["--workers", "2", "--max-queue", "5"]);
    let (first, started) = scrape(&served);
    let mut expected = Expected::default();
    send_mixed_jobs(&served, &mut expected);
    let (middle, middle_at) = fill_the_queue(&served, &mut expected);
    let (last, last_at) = scrape_when(&served, "every worker idle again", |now| {
        gauge(now, "rlvr_workers_busy") == 0.0 && gauge(now, "rlvr_queue_depth") == 0.0
    });
    assert_every_queried_metric_is_exported(&dashboard, &last);

    let whole = Window {
        before: &first,
        after: &last,
        seconds: last_at.duration_since(started).as_secs_f64(),
    };
    let held_window = Window {
        before: &first,
        after: &middle,
        seconds: middle_at.duration_since(started).as_secs_f64(),
    };
    let rendered = render(&dashboard, whole);
    let rendered_held = render(&dashboard, held_window);

    // The picture, as a table an engineer can read, beside the test's other files.
    let table = table(&rendered, &rendered_held);
    let directory = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(directory.path().join("dashboard.md"), &table).expect("written");
    eprintln!("{table}");

    let seconds = whole.seconds;
    let verdicts = "Verdicts by kind (tests/s)";
    assert!(expected.verdicts.len() >= 2, "{expected:?}");
    for (verdict, tests) in &expected.verdicts {
        assert_eq!(
            count(&rendered, verdicts, verdict, seconds),
            *tests,
            "{verdict}: {table}"
        );
    }
    let verdicts_shown: f64 = rendered
        .iter()
        .filter(|(panel, _, _)| panel == verdicts)
        .map(|(_, _, value)| value * seconds)
        .sum();
    let verdicts_sent: f64 = expected.verdicts.values().sum();
    assert!((verdicts_shown - verdicts_sent).abs() < 1e-6, "{table}");

    let tampering_shown: f64 = rendered
        .iter()
        .filter(|(panel, legend, _)| {
            panel == "Tampering by kind (tests/s)" && legend != "untrusted comparisons"
        })
        .map(|(_, _, value)| value * seconds)
        .sum();
    assert!(
        expected.tampering >= 1.0,
        "the frame-introspecting job is reported: {expected:?}"
    );
    assert!(
        (tampering_shown - expected.tampering).abs() < 1e-6,
        "{table}"
    );

    let checkers = "Checker outcomes (/s)";
    assert_eq!(expected.checker_errors, 1.0, "{expected:?}");
    assert_eq!(expected.checker_rejected, 1.0, "{expected:?}");
    assert_eq!(
        count(&rendered, checkers, "checker_error (jobs)", seconds),
        1.0
    );
    assert_eq!(
        count(&rendered, checkers, "checker_rejected (tests)", seconds),
        1.0
    );

    let jobs = "Jobs, cancellations and deadlines (/s)";
    assert_eq!(expected.jobs, 10.0);
    assert_eq!(count(&rendered, jobs, "finished", seconds), expected.jobs);
    assert_eq!(count(&rendered, jobs, "cancelled", seconds), 0.0);

    let sandbox = "Sandbox errors and panics (/s)";
    assert_eq!(
        count(&rendered, sandbox, "sandbox errors", seconds),
        expected.sandbox_errors
    );
    assert_eq!(count(&rendered, sandbox, "panics", seconds), 0.0);

    let refusals = "Admission refusals (/s)";
    assert_eq!(count(&rendered, refusals, "429 queue full", seconds), 1.0);
    assert_eq!(count(&rendered, refusals, "503 connections", seconds), 0.0);
    let requests = "Requests by route and status (/s)";
    assert_eq!(count(&rendered, requests, "/v1/verify 200", seconds), 2.0);
    assert_eq!(count(&rendered, requests, "/v1/verify 429", seconds), 1.0);
    assert!(
        rendered
            .iter()
            .all(|(panel, legend, _)| panel != requests || legend.starts_with("/v1/verify")),
        "scrapes on the metrics port are not counted: {table}"
    );

    let workers = "Workers busy";
    assert_eq!(shown(&rendered_held, workers, "busy"), 2.0);
    assert_eq!(shown(&rendered_held, workers, "workers"), 2.0);
    assert_eq!(shown(&rendered, workers, "busy"), 0.0);
    let queue = "Queue depth";
    assert_eq!(shown(&rendered_held, queue, "admitted"), 5.0);
    assert_eq!(shown(&rendered_held, queue, "capacity"), 5.0);
    assert_eq!(shown(&rendered_held, queue, "waiting for a worker"), 2.0);
    assert_eq!(shown(&rendered, queue, "admitted"), 0.0);

    // Five jobs slept 1.5 s: more than 1% of the jobs took over a second.
    let latency = "Job latency (admission to result)";
    let (p50, p95, p99) = (
        shown(&rendered, latency, "p50"),
        shown(&rendered, latency, "p95"),
        shown(&rendered, latency, "p99"),
    );
    assert!(
        0.0 < p50 && p50 <= p95 && p95 <= p99 && p99 > 1.0 && p99 <= 300.0,
        "{table}"
    );
    let route_latency = shown(&rendered, "Request latency p95 by route", "/v1/verify");
    assert!(route_latency > 1.0 && route_latency.is_finite(), "{table}");
}
