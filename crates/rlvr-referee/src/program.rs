//! The referee program: a package of its own modules plus the runner's framing and value codec,
//! so that both ends of a live call speak one format.

/// The referee's Python side: the package `rlvr_referee` (`referee/__init__.py`, the protocol's
/// description), its modules under `referee/`, and the runner's `protocol` and value codec
/// (`codec`, `encoder`, `decoder`) as modules of this package too. Imported from memory by the
/// runner's bootstrap.
pub const REFEREE_MODULES: &[(&str, &str)] = &[
    ("rlvr_referee", include_str!("referee/__init__.py")),
    ("rlvr_referee.codec", rlvr_runner::CODEC_SOURCE),
    ("rlvr_referee.decoder", rlvr_runner::DECODER_SOURCE),
    ("rlvr_referee.encoder", rlvr_runner::ENCODER_SOURCE),
    ("rlvr_referee.live", include_str!("referee/live.py")),
    ("rlvr_referee.main", include_str!("referee/main.py")),
    ("rlvr_referee.protocol", rlvr_runner::FRAMING_SOURCE),
    (
        "rlvr_referee.stand_ins",
        include_str!("referee/stand_ins.py"),
    ),
    ("rlvr_referee.test", include_str!("referee/test.py")),
];

/// The module whose `main()` starts the referee.
pub const REFEREE_ENTRY: &str = "rlvr_referee.main";

/// Arguments that make the interpreter a referee: isolated mode, no `site`, the package through
/// the runner's bootstrap (compiled in a short-lived child, imported from memory; each source
/// crosses in pieces, as one argument may not exceed 128 KiB).
pub fn interpreter_arguments() -> Vec<String> {
    rlvr_runner::bootstrapped_arguments(REFEREE_ENTRY, REFEREE_MODULES)
}

#[cfg(test)]
mod tests {
    use super::REFEREE_MODULES;

    #[test]
    fn every_file_of_the_referee_is_one_of_its_modules() {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/referee");
        let mut files: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".py"))
            .chain(
                ["codec.py", "decoder.py", "encoder.py", "protocol.py"]
                    .into_iter()
                    .map(str::to_owned),
            )
            .collect();
        files.sort();
        let mut modules: Vec<String> = REFEREE_MODULES
            .iter()
            .map(|(name, _)| match name.strip_prefix("rlvr_referee.") {
                Some(module) => format!("{module}.py"),
                None => "__init__.py".to_owned(),
            })
            .collect();
        modules.sort();
        assert_eq!(files, modules);
    }
}
