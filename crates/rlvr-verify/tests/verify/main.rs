//! Planning and scoring without running anything: extraction, comparison, checkers' tables,
//! each profile's plans against the references' measured rules, the prime_code corpus. One
//! test binary, a module per concern.

mod common;

mod checker_table;
mod comparison_matrix;
mod extraction_table;
mod judge_live;
mod planning;
mod prime_corpus;
mod reference_plans;
