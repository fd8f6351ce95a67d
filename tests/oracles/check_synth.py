#!/usr/bin/env python3
"""Read a JSONL file with Python's json module and print the dataset card's figures as JSON.

Usage: check_synth.py FILE [--skip-rows 3,17,...]

An independent computation of what `rlvr synth` reports in its summary (and what `rlvr stats`
must find): lengths in code points, statistics.median, nearest-rank P95, whitespace
normalization with " ".join(text.split()). Rows listed in --skip-rows (zero-based, e.g. the
injected lines of a --inject-faults file) are left out; every other line must be a valid record.
"""

import json
import math
import statistics
import sys

RELEASED_METADATA_ORDER = ["data_type", "data_source", "ability", "style", "hash", "ground_truth"]
CONSTANTS = {"data_type": "code", "data_source": "coder1_longcot", "ability": "code", "style": "rule"}


def spread(values):
    if not values:
        return {"min": 0, "median": 0.0, "p95": 0, "max": 0}
    ordered = sorted(values)
    rank = math.ceil(0.95 * len(ordered))
    return {
        "min": ordered[0],
        "median": float(statistics.median(ordered)),
        "p95": ordered[max(rank, 1) - 1],
        "max": ordered[-1],
    }


def main():
    path = sys.argv[1]
    skip = set()
    if "--skip-rows" in sys.argv:
        listed = sys.argv[sys.argv.index("--skip-rows") + 1]
        skip = {int(row) for row in listed.split(",") if row}
    prompts, hashes, prompt_chars, pairs, asserts = [], set(), [], [], []
    mixed_rows, list_values, label_equal, constants_ok, ascii_escaped_rows = [], 0, 0, True, 0
    io_records = functional_records = other_key_order = 0
    problems = []
    with open(path, "rb") as handle:
        for row, raw in enumerate(handle):
            if row in skip:
                continue
            text = raw.decode("utf-8")
            if "\\u" in text:
                ascii_escaped_rows += 1
            record = json.loads(text)
            metadata = record["metadata"]
            if sorted(record) != ["label", "metadata", "prompt"]:
                problems.append(f"row {row}: top-level keys {list(record)}")
            elif list(record) != ["prompt", "label", "metadata"] or list(metadata) != RELEASED_METADATA_ORDER:
                other_key_order += 1
            if sorted(metadata) != sorted(RELEASED_METADATA_ORDER):
                problems.append(f"row {row}: metadata keys {list(metadata)}")
            if any(metadata[key] != value for key, value in CONSTANTS.items()):
                constants_ok = False
            if len(metadata["hash"]) != 32 or any(c not in "0123456789abcdef" for c in metadata["hash"]):
                problems.append(f"row {row}: hash {metadata['hash']!r}")
            hashes.add(metadata["hash"])
            messages = record["prompt"]
            if len(messages) != 1 or messages[0]["role"] != "user" or not messages[0]["content"]:
                problems.append(f"row {row}: prompt {messages!r:.80}")
            content = messages[0]["content"]
            prompts.append(content)
            prompt_chars.append(len(content))
            label = record["label"]
            if label == metadata["ground_truth"]:
                label_equal += 1
            if "functional" in label:
                functional_records += 1
                asserts.append(len(label["functional"]))
            else:
                io_records += 1
                if len(label["inputs"]) != len(label["outputs"]) or not label["inputs"]:
                    problems.append(f"row {row}: inputs/outputs lengths")
                pairs.append(len(label["inputs"]))
                lists = sum(isinstance(v, list) for v in label["inputs"] + label["outputs"])
                if lists:
                    mixed_rows.append(row)
                    list_values += lists
    examples = len(prompts)
    exact = len(set(prompts))
    figures = {
        "examples": examples,
        "unique_prompts_exact": exact,
        "unique_prompts_normalized": len({" ".join(p.split()) for p in prompts}),
        "repeated_prompt_rows": examples - exact,
        "distinct_hashes": len(hashes),
        "prompt_chars": spread(prompt_chars),
        "io_records": io_records,
        "functional_records": functional_records,
        "io_pairs_total": sum(pairs),
        "functional_tests_total": sum(asserts),
        "io_pairs_per_record": spread(pairs),
        "functional_tests_per_record": spread(asserts),
        "mixed_value_rows": mixed_rows,
        "list_values_total": list_values,
        "label_equals_ground_truth": label_equal,
        "routing_constants_ok": constants_ok,
        "prompt_bytes_differ_from_chars": sum(len(p.encode("utf-8", "surrogatepass")) != len(p) for p in prompts),
        "rows_with_other_key_order": other_key_order,
        "rows_with_unicode_escapes": ascii_escaped_rows,
        "problems": problems[:20],
    }
    print(json.dumps(figures, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
