//! The `answer_may_vary` rule measured on the statement corpus (issue 25): precision and recall
//! per corpus and per kind, and the epsilon it reads, computed here and compared with the table
//! docs/products.md links to: `docs/answer-variety-corpus.snap.md`, an insta snapshot (its
//! metadata beside it in `answer-variety-corpus.snap`; `cargo insta review`, or
//! `INSTA_UPDATE=always`, rewrites it from this run).

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use rlvr_dataset::answer_variety::{VarietyKind, answer_variety};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/answer-variety")
}

/// One corpus entry: what a reader of the statement knows about it.
#[derive(Debug)]
struct Case {
    id: String,
    text: String,
    kinds: BTreeSet<VarietyKind>,
    /// `Some(None)`: a tolerance without a stated epsilon.
    epsilon: Option<Option<f64>>,
}

fn kind_named(name: &str) -> VarietyKind {
    VarietyKind::ALL
        .into_iter()
        .find(|kind| kind.name() == name)
        .unwrap_or_else(|| panic!("unknown kind {name:?} in the corpus"))
}

fn read_corpus(name: &str) -> Vec<Case> {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut cases: Vec<Case> = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if let Some(header) = line.strip_prefix("### ") {
            let fields: Vec<&str> = header.split_whitespace().collect();
            let [id, _style, expect] = fields[..] else {
                panic!("{}:{}: `### ID STYLE EXPECT`", path.display(), number + 1);
            };
            let mut case = Case {
                id: id.to_owned(),
                text: String::new(),
                kinds: BTreeSet::new(),
                epsilon: None,
            };
            if expect != "none" {
                for item in expect.split(',') {
                    match item.split_once('=') {
                        Some(("tolerance", epsilon)) => {
                            case.kinds.insert(VarietyKind::Tolerance);
                            case.epsilon = Some(epsilon.parse().ok());
                        }
                        _ => {
                            case.kinds.insert(kind_named(item));
                        }
                    }
                }
            }
            assert!(
                cases.iter().all(|earlier| earlier.id != case.id),
                "{}: duplicate id {id}",
                path.display()
            );
            cases.push(case);
        } else if let Some(case) = cases.last_mut() {
            case.text.push_str(line);
            case.text.push('\n');
        }
    }
    assert!(!cases.is_empty(), "{}: no cases", path.display());
    cases
}

/// Counts for one corpus: record level (any kind flagged) and per kind.
#[derive(Debug, Default)]
struct Score {
    cases: usize,
    positives: usize,
    true_positives: usize,
    false_positives: usize,
    false_negatives: usize,
    kind_true_positives: [usize; 3],
    kind_false_positives: [usize; 3],
    kind_false_negatives: [usize; 3],
    epsilons_stated: usize,
    epsilons_right: usize,
    misses: Vec<String>,
}

fn ratio(numerator: usize, denominator: usize) -> String {
    if denominator == 0 {
        "n/a".to_owned()
    } else {
        format!(
            "{:.1}% ({numerator}/{denominator})",
            100.0 * numerator as f64 / denominator as f64
        )
    }
}

fn score(cases: &[Case]) -> Score {
    let mut score = Score {
        cases: cases.len(),
        ..Score::default()
    };
    for case in cases {
        let found = answer_variety(&case.text);
        let flagged: BTreeSet<VarietyKind> = found.iter().map(|phrase| phrase.kind).collect();
        let positive = !case.kinds.is_empty();
        score.positives += usize::from(positive);
        match (positive, !flagged.is_empty()) {
            (true, true) => score.true_positives += 1,
            (false, true) => {
                score.false_positives += 1;
                score.misses.push(format!(
                    "`{}` flagged ({})",
                    case.id,
                    found
                        .iter()
                        .map(|phrase| format!("{}: \"{}\"", phrase.kind.name(), phrase.phrase))
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            (true, false) => {
                score.false_negatives += 1;
                score.misses.push(format!("`{}` missed", case.id));
            }
            (false, false) => {}
        }
        for kind in VarietyKind::ALL {
            let index = kind as usize;
            match (case.kinds.contains(&kind), flagged.contains(&kind)) {
                (true, true) => score.kind_true_positives[index] += 1,
                (false, true) => score.kind_false_positives[index] += 1,
                (true, false) => score.kind_false_negatives[index] += 1,
                (false, false) => {}
            }
        }
        if let Some(Some(expected)) = case.epsilon {
            score.epsilons_stated += 1;
            let read = found
                .iter()
                .find(|phrase| phrase.kind == VarietyKind::Tolerance)
                .and_then(|phrase| phrase.epsilon);
            match read {
                Some(value) if (value - expected).abs() <= expected * 1e-9 => {
                    score.epsilons_right += 1;
                }
                // A missed record is already listed as missed.
                None if !flagged.contains(&VarietyKind::Tolerance) => {}
                other => score.misses.push(format!(
                    "`{}` epsilon {} read as {other:?}",
                    case.id, expected
                )),
            }
        }
    }
    score
}

fn table(corpora: &[(&str, &Score)]) -> String {
    let mut text = String::from(
        "| corpus | statements | positive | precision | recall | epsilon read right |\n|---|---|---|---|---|---|\n",
    );
    for (name, score) in corpora {
        let _ = writeln!(
            text,
            "| {name} | {} | {} | {} | {} | {} |",
            score.cases,
            score.positives,
            ratio(
                score.true_positives,
                score.true_positives + score.false_positives
            ),
            ratio(
                score.true_positives,
                score.true_positives + score.false_negatives
            ),
            ratio(score.epsilons_right, score.epsilons_stated),
        );
    }
    text.push_str("\n| corpus | kind | precision | recall |\n|---|---|---|---|\n");
    for (name, score) in corpora {
        for kind in VarietyKind::ALL {
            let index = kind as usize;
            let (hits, false_alarms, misses) = (
                score.kind_true_positives[index],
                score.kind_false_positives[index],
                score.kind_false_negatives[index],
            );
            let _ = writeln!(
                text,
                "| {name} | `{}` | {} | {} |",
                kind.name(),
                ratio(hits, hits + false_alarms),
                ratio(hits, hits + misses)
            );
        }
    }
    for (name, score) in corpora {
        if score.misses.is_empty() {
            let _ = write!(text, "\nErrors on {name}: none.\n");
        } else {
            let _ = write!(text, "\nErrors on {name}: {}.\n", score.misses.join(", "));
        }
    }
    text
}

#[test]
fn issue_25_precision_and_recall_on_the_corpus_are_the_documented_ones() {
    let tuning = score(&read_corpus("tuning.txt"));
    let held_out = score(&read_corpus("held-out.txt"));
    let computed = table(&[("tuning", &tuning), ("held-out", &held_out)]);
    // A Markdown page of its own in docs/ (a binary snapshot keeps its content file as it is).
    insta::with_settings!({
        snapshot_path => "../../../../docs",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_binary_snapshot!("answer-variety-corpus.md", computed.into_bytes());
    });
    // The rule was written against the tuning corpus: anything it gets wrong there is a bug.
    assert!(
        tuning.misses.is_empty(),
        "the rule is wrong on its own tuning corpus: {:?}",
        tuning.misses
    );
    assert!(tuning.positives > 40 && tuning.cases - tuning.positives > 40);
    assert!(held_out.positives > 30 && held_out.cases - held_out.positives > 30);
}
