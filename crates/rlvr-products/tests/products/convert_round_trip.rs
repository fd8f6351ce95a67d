//! Property: release -> upstream -> release and upstream -> release -> upstream are lossless
//! for any record in the dataset's schema (issue 7).

use proptest::prelude::*;
use rlvr_products::LineLayout;
use rlvr_products::convert::convert_line;
use serde_json::{Value, json};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,40}",
        "[\\PC\n\t\"\\\\/]{0,40}",
        Just("≤ 10^5 × 2 — naïve 漢字 😀".to_owned()),
    ]
}

fn test_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => text().prop_map(Value::from),
        1 => prop::collection::vec(text(), 1..3).prop_map(|items| json!(items)),
    ]
}

fn tests() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1usize..6).prop_flat_map(|count| {
            (
                prop::collection::vec(test_value(), count),
                prop::collection::vec(test_value(), count),
            )
                .prop_map(|(inputs, outputs)| json!({"inputs": inputs, "outputs": outputs}))
        }),
        prop::collection::vec(text(), 1..4)
            .prop_map(|functional| json!({"functional": functional})),
    ]
}

fn release_record() -> impl Strategy<Value = Value> {
    (text(), tests(), "[0-9a-f]{32}").prop_map(|(prompt, tests, hash)| {
        json!({
            "prompt": [{"role": "user", "content": format!("Solve: {prompt}")}],
            "label": tests,
            "metadata": {"data_type": "code", "data_source": "coder1_longcot", "ability": "code",
                         "style": "rule", "hash": hash, "ground_truth": tests},
        })
    })
}

fn convert(line: &[u8], from: LineLayout, to: LineLayout) -> Vec<u8> {
    let mut out = Vec::new();
    convert_line(line, from, to, &mut out).expect("a schema-valid line converts");
    assert_eq!(out.pop(), Some(b'\n'));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn release_upstream_release_is_lossless(record in release_record()) {
        let line = serde_json::to_vec(&record).unwrap();
        let upstream = convert(&line, LineLayout::Release, LineLayout::Upstream);
        let upstream_value: Value = serde_json::from_slice(&upstream).unwrap();
        // The upstream layout keeps the tests as a JSON string under reward_model.
        let ground_truth: Value =
            serde_json::from_str(upstream_value["reward_model"]["ground_truth"].as_str().unwrap()).unwrap();
        prop_assert_eq!(&ground_truth, &record["label"]);
        let back = convert(&upstream, LineLayout::Upstream, LineLayout::Release);
        let back_value: Value = serde_json::from_slice(&back).unwrap();
        prop_assert_eq!(&back_value, &record);
        // And the other way round from the upstream line.
        let again = convert(&back, LineLayout::Release, LineLayout::Upstream);
        prop_assert_eq!(serde_json::from_slice::<Value>(&again).unwrap(), upstream_value);
    }
}
