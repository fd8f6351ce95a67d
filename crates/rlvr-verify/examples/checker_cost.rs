//! What one comparison costs (issue 25): the judge's default comparison against each built-in
//! checker, on a W1-sized output (one integer) and on a large one (100,000 numbers on 1,000
//! lines), the output equal to the expected text. Batches of each rule run interleaved; the
//! median batch gives nanoseconds per comparison.
//!
//! `cargo run --release -p rlvr-verify --example checker_cost -- [BATCHES]`

use std::hint::black_box;
use std::time::Instant;

use rlvr_verify::comparison::judge_output_equal;
use rlvr_verify::{BuiltInChecker, Tolerance};

fn main() {
    let batches: usize = std::env::args()
        .nth(1)
        .and_then(|text| text.parse().ok())
        .unwrap_or(15);
    let small = "1234567890\n".to_owned();
    let large: String = (0..1_000)
        .map(|line| {
            let numbers: Vec<String> = (0..100)
                .map(|column| format!("{}.{:03}", line * 100 + column, column))
                .collect();
            numbers.join(" ") + "\n"
        })
        .collect();
    let float = BuiltInChecker::Float {
        epsilon: Tolerance::new(1e-6).expect("in (0, 1)"),
    };
    let rules: [(&str, Option<BuiltInChecker>); 5] = [
        ("judge default", None),
        ("float:1e-6", Some(float)),
        ("tokens", Some(BuiltInChecker::Tokens)),
        ("lines-any-order", Some(BuiltInChecker::LinesAnyOrder)),
        ("set", Some(BuiltInChecker::Set)),
    ];
    println!(
        "| rule | W1 output (11 B), ns | 100,000 numbers ({} KiB), µs |",
        large.len() / 1024
    );
    println!("|---|---|---|");
    let mut results = vec![(Vec::new(), Vec::new()); rules.len()];
    for _ in 0..batches {
        for ((_, rule), (small_times, large_times)) in rules.iter().zip(&mut results) {
            small_times.push(time_per_comparison(*rule, &small, 200_000));
            large_times.push(time_per_comparison(*rule, &large, 3));
        }
    }
    for ((name, _), (small_times, large_times)) in rules.iter().zip(&mut results) {
        println!(
            "| {name} | {:.0} | {:.0} |",
            median(small_times),
            median(large_times) / 1000.0
        );
    }
}

/// Nanoseconds per comparison of `text` with itself, over `repeats` comparisons.
fn time_per_comparison(rule: Option<BuiltInChecker>, text: &str, repeats: u32) -> f64 {
    let started = Instant::now();
    for _ in 0..repeats {
        let accepted = match rule {
            None => judge_output_equal(black_box(text.as_bytes()), black_box(text)),
            Some(checker) => checker.accepts(black_box(text.as_bytes()), black_box(text)),
        };
        assert!(accepted);
    }
    started.elapsed().as_nanos() as f64 / f64::from(repeats)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
