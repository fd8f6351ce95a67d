//! The README.md an export directory gets: the YAML `configs:` block that makes the Hub (and
//! `datasets.load_dataset(DIR)`) find the shards, and a short description of the layout.

use crate::layout::Layout;

/// README text for an export of `rows` rows in `layout`, shards under `data/`.
pub fn hub_readme(layout: Layout, split: &str, rows: u64) -> String {
    let columns = match layout {
        Layout::Hf => {
            "- `prompt`: list of `{role, content}` messages (one user message).\n\
             - `test_kind`: `io` or `functional`.\n\
             - `inputs`, `outputs`: paired test strings of `io` records (empty otherwise).\n\
             - `functional`: Python test strings of `functional` records (empty otherwise).\n\
             - `ground_truth`: `metadata.ground_truth` exactly as released, as JSON text.\n\
             - `hash`: the inherited `metadata.hash` (not unique); `row`: zero-based source row.\n\
             - `normalized_values`: a list-valued test value was joined with `\"\\n\"` into a string.\n\
             - `lossy_text`: a lone surrogate became U+FFFD in a string column (`ground_truth` keeps it).\n\
             - `ensure_ascii`: the source line escaped non-ASCII text (used to rebuild it byte for byte).\n\
             - `routing`: `metadata.data_type`, `data_source`, `ability`, `style`.\n"
        }
        Layout::Verl => {
            "- `data_source`, `ability`: routing fields verl passes to the reward function.\n\
             - `prompt`: list of `{role, content}` messages.\n\
             - `reward_model`: `{style, ground_truth}`, `ground_truth` being JSON text (verl's\n  \
               sandbox_fusion and prime_code rewards `json.loads` it).\n\
             - `extra_info`: `{index, hash, split, data_type, ensure_ascii, normalized_values, lossy_text, data_source, assert_case}`.\n"
        }
    };
    format!(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: {split}\n    path: data/{split}-*.parquet\n---\n\n\
         # code-rlvr-15k ({layout} layout)\n\n\
         {rows} rows exported by `rlvr export parquet --layout {layout}` from the JSON Lines release; \
         `rlvr import parquet` turns these files back into it.\n\n{columns}",
        layout = layout.name(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readme_has_the_configs_block() {
        let readme = hub_readme(Layout::Hf, "train", 3);
        assert!(readme.starts_with(
            "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*.parquet\n---\n"
        ));
    }
}
