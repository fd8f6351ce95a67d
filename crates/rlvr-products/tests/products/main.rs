//! The rlvr-products crate's integration tests: one test binary, a module per concern.

mod convert_round_trip;
mod export_import_round_trip;
mod full_disk;
