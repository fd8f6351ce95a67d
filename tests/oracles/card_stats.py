#!/usr/bin/env python3
"""Independent computation of the dataset card's summary figures, with Python's json module only.

Usage: card_stats.py FILE [--no-hash]. Prints one JSON object with the keys `rlvr stats --json`
prints, computed the way the card describes (statistics.median, nearest-rank P95, code points,
" ".join(s.split())). The Rust test suite compares the two outputs.
"""
import hashlib
import json
import statistics
import sys

ROUTING = {"data_type": "code", "data_source": "coder1_longcot", "ability": "code", "style": "rule"}


def spread(values, with_p95=False):
    if not values:
        result = {"min": None, "median": None, "max": None}
        if with_p95:
            result = {"min": None, "median": None, "p95": None, "max": None}
        return result
    ordered = sorted(values)
    result = {"min": ordered[0], "median": statistics.median(ordered)}
    if with_p95:
        rank = -(-95 * len(ordered) // 100)
        result["p95"] = ordered[rank - 1]
    result["max"] = ordered[-1]
    return result


def main():
    path = sys.argv[1]
    no_hash = "--no-hash" in sys.argv[2:]
    prompts, normalized, hashes = set(), set(), set()
    prompt_chars, io_pairs, functional_counts = [], [], []
    mixed_rows, list_values = [], 0
    label_equal, routing_ok, examples = 0, True, 0
    with open(path, "r", encoding="utf-8") as handle:
        row = -1
        for line in handle:
            if not line.strip(" \t\r\n"):
                continue
            row += 1
            record = json.loads(line)
            examples += 1
            prompt = record["prompt"][0]["content"]
            prompts.add(prompt)
            normalized.add(" ".join(prompt.split()))
            prompt_chars.append(len(prompt))
            metadata = record["metadata"]
            hashes.add(metadata["hash"])
            label = record["label"]
            if "functional" in label:
                functional_counts.append(len(label["functional"]))
            else:
                io_pairs.append(len(list(zip(label["inputs"], label["outputs"]))))
                lists = sum(isinstance(value, list) for value in label["inputs"] + label["outputs"])
                if lists:
                    mixed_rows.append(row)
                    list_values += lists
            label_equal += label == metadata["ground_truth"]
            routing_ok = routing_ok and all(metadata[key] == value for key, value in ROUTING.items())
    sha256 = None
    if not no_hash:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        sha256 = digest.hexdigest()
    import os

    print(json.dumps({
        "examples": examples,
        "sha256": sha256,
        "file_size_bytes": os.path.getsize(path),
        "unique_prompts_exact": len(prompts),
        "unique_prompts_normalized": len(normalized),
        "repeated_prompt_rows": examples - len(prompts),
        "distinct_hashes": len(hashes),
        "prompt_chars": spread(prompt_chars, with_p95=True),
        "io_records": len(io_pairs),
        "functional_records": len(functional_counts),
        "io_pairs_total": sum(io_pairs),
        "functional_tests_total": sum(functional_counts),
        "io_pairs_per_record": spread(io_pairs),
        "functional_tests_per_record": spread(functional_counts),
        "mixed_value_rows": mixed_rows,
        "list_values_total": list_values,
        "label_equals_ground_truth": label_equal,
        "routing_constants_ok": routing_ok,
    }, indent=2))


if __name__ == "__main__":
    main()
