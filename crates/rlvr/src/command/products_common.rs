//! Helpers shared by the data-product subcommands (`convert`, `export`, `import`, `split`,
//! `dedup`, `card`, `audit`): byte sizes on the command line, JSON output, bad lines.

use crate::exit::Error;
use crate::stdout::outln;

/// Parses `500MB`, `1GiB`, `64k` or a plain byte count. Decimal units are powers of 1000 (as
/// `datasets`' `max_shard_size` reads them), binary units powers of 1024.
pub(crate) fn parse_byte_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|character: char| !(character.is_ascii_digit() || character == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size such as 500MB"))?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown size unit `{other}` (use B, KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    let bytes = number * multiplier;
    if !(1.0..=1e15).contains(&bytes) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes as u64)
}

/// `--group-by` / `--by` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum GroupByArg {
    /// `" ".join(prompt.split())`, as the card counts distinct prompts.
    NormalizedPrompt,
    /// The prompt text exactly.
    ExactPrompt,
    /// `metadata.hash`.
    Hash,
}

impl From<GroupByArg> for rlvr_products::GroupBy {
    fn from(value: GroupByArg) -> Self {
        match value {
            GroupByArg::NormalizedPrompt => Self::NormalizedPrompt,
            GroupByArg::ExactPrompt => Self::ExactPrompt,
            GroupByArg::Hash => Self::Hash,
        }
    }
}

/// Writes `value` as pretty JSON and a newline to stdout.
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<(), Error> {
    outln!("{}", serde_json::to_string_pretty(value)?)?;
    Ok(())
}

/// Prints each listed bad line once on stderr (`rlvr: bad line: FILE:LINE: row R, byte offset
/// B: reason`), then how many there were when not all are listed. The JSON report carries the
/// same list, so `--json` prints nothing here.
pub(crate) fn print_bad_lines(listed: &[String], count: u64, what_happened: &str) {
    for line in listed {
        eprintln!("rlvr: bad line: {line}");
    }
    if count > 0 {
        let shown = if count > listed.len() as u64 {
            format!(" (first {} shown)", listed.len())
        } else {
            String::new()
        };
        eprintln!("rlvr: {count} line(s) are not records; {what_happened}{shown}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_datasets() {
        assert_eq!(parse_byte_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_byte_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_byte_size("2000"), Ok(2000));
        assert!(parse_byte_size("ten").is_err());
        assert!(parse_byte_size("0").is_err());
    }
}
