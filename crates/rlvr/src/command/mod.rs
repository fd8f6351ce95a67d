//! One module per subcommand; each exposes `Args` (its clap flags) and `run`.

pub(crate) mod audit;
pub(crate) mod card;
pub(crate) mod check_checker;
pub(crate) mod convert;
pub(crate) mod dedup;
pub(crate) mod doctor;
pub(crate) mod export;
pub(crate) mod fetch;
pub(crate) mod import;
pub(crate) mod products_common;
pub(crate) mod redteam;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod show;
pub(crate) mod split;
pub(crate) mod stats;
pub(crate) mod synth;
pub(crate) mod testlib_header;
pub(crate) mod token_file;
pub(crate) mod validate;
pub(crate) mod verify;

/// The most workers `--workers` accepts: each is a sandbox with its own interpreter (tens of
/// MB), so more than this is a typo, not a machine (a huge value once panicked the thread
/// spawn).
pub(crate) const MAX_WORKERS: usize = 1024;

/// `--workers` of `verify`, `serve` and `redteam`: 1 to [`MAX_WORKERS`], the same rule for
/// each (0 is refused everywhere, never silently raised to 1).
pub(crate) fn parse_workers(text: &str) -> Result<usize, String> {
    let workers: usize = text
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number"))?;
    if (1..=MAX_WORKERS).contains(&workers) {
        Ok(workers)
    } else {
        Err(format!("must be between 1 and {MAX_WORKERS}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_between_one_and_the_maximum() {
        assert_eq!(parse_workers("1"), Ok(1));
        assert_eq!(parse_workers("1024"), Ok(MAX_WORKERS));
        for refused in [
            "0",
            "1025",
            "18446744073709551615",
            "99999999999999999999",
            "-1",
            "x",
            "",
        ] {
            assert!(parse_workers(refused).is_err(), "{refused}");
        }
    }
}
