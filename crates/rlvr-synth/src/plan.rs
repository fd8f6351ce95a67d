//! The plan: every row's decisions made up front, before any text is rendered. Counts that the
//! card states exactly (repeated prompts, whitespace-only variants, functional records, the three
//! mixed-value records) are placed by exact counts scaled to the row count, so a `--like-card`
//! file reproduces the card's figures; the distributions (prompt lengths, pair counts, test
//! sizes) are drawn here too, and the test-string byte budget is normalized over the whole file
//! so the average record lands close to the requested size. Rendering then only reads the plan.

use rand::RngExt;
use rand::seq::{SliceRandom, index};

use crate::SynthOptions;
use crate::random::{Random, Stream, log_normal_clamped, random_for, unit_mean_factor};

/// The card's figures that the plan scales to the row count.
mod card {
    pub(super) const ROWS: f64 = 15_001.0;
    pub(super) const REPEATED_ROWS: f64 = 1_426.0;
    pub(super) const WHITESPACE_VARIANTS: f64 = 7.0;
    pub(super) const FUNCTIONAL_RECORDS: f64 = 43.0;
    pub(super) const MIXED_VALUE_ROWS: [u64; 3] = [11_367, 12_567, 14_571];
    /// List-valued entries per mixed row, in inputs and (the same number) in outputs: 4 + 4 in all.
    pub(super) const LIST_VALUES_PER_MIXED_ROW: [u32; 3] = [2, 1, 1];
    pub(super) const PROMPT_CHARS_MIN: u32 = 44;
    pub(super) const PROMPT_CHARS_MEDIAN: f64 = 1_747.0;
    pub(super) const PROMPT_CHARS_P95: f64 = 3_225.0;
    pub(super) const PROMPT_CHARS_MAX: u32 = 9_363;
    pub(super) const PAIRS_MIN: u32 = 16;
    pub(super) const PAIRS_MEDIAN: f64 = 102.0;
    pub(super) const PAIRS_MAX: u32 = 1_226;
    pub(super) const ASSERTS_MIN: u32 = 17;
    pub(super) const ASSERTS_MEDIAN: f64 = 23.0;
    pub(super) const ASSERTS_MAX: u32 = 127;
}

/// Below this many rows the special rows (bounds, quirks, variants) are left out.
const SPECIAL_ROWS_FROM: u64 = 20;
/// Log-scale spread of the pair count: the card's mean (1,667,186 / 14,958 = 111.5) over its
/// median (102) is exp(spread^2 / 2).
const PAIRS_SPREAD: f64 = 0.42;
/// Share of rows written with `ensure_ascii=True` escaping.
const ASCII_ONLY_SHARE: f64 = 0.015;
/// Share of problems whose statement contains an emoji.
const EMOJI_SHARE: f64 = 0.005;
/// Bytes of a record line other than the prompt text and the two label copies.
pub(crate) const RECORD_OVERHEAD_BYTES: u64 = 196;

/// One distinct prompt text.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    /// Seeds the text (the problem's own random stream).
    pub(crate) key: u64,
    /// Length of the text in code points (a whitespace variant may differ by one).
    pub(crate) chars: u32,
    pub(crate) functional: bool,
    pub(crate) with_emoji: bool,
    /// Set when this text is another problem's text with one whitespace change.
    pub(crate) whitespace_variant: Option<WhitespaceVariant>,
}

/// A text equal to `source`'s after Python's `" ".join(text.split())`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WhitespaceVariant {
    pub(crate) source: u32,
    /// Which whitespace change; see `prompt::apply_whitespace_variant`.
    pub(crate) style: u32,
}

/// The tests of one row.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TestsPlan {
    InputOutput {
        pairs: u32,
        /// Escaped bytes of all test strings in one copy of the label.
        body_bytes: u64,
        /// List-valued inputs (and as many list-valued outputs) in this record.
        list_values: u32,
    },
    Functional {
        asserts: u32,
    },
}

/// One row: which prompt, which tests, how it is escaped.
#[derive(Debug, Clone)]
pub(crate) struct RowPlan {
    pub(crate) problem: u32,
    pub(crate) tests: TestsPlan,
    /// Written with every non-ASCII character escaped (`ensure_ascii=True`).
    pub(crate) ascii_only: bool,
}

/// The whole file's plan.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub(crate) problems: Vec<Problem>,
    pub(crate) rows: Vec<RowPlan>,
    pub(crate) repeated_rows: u64,
    pub(crate) whitespace_variants: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Original,
    Repeat,
    Functional,
    Variant,
    ShortestPrompt,
    LongestPrompt,
    EmojiEscaped,
}

fn scaled(rows: u64, card_count: f64) -> usize {
    (rows as f64 * card_count / card::ROWS).round() as usize
}

/// Zero-based rows of the mixed string/list records: the card's rows scaled to `rows`.
pub(crate) fn mixed_value_rows(rows: u64) -> Vec<u64> {
    if rows < SPECIAL_ROWS_FROM {
        return Vec::new();
    }
    card::MIXED_VALUE_ROWS
        .iter()
        .map(|&card_row| card_row * rows / card::ROWS as u64)
        .collect()
}

impl Plan {
    pub(crate) fn new(options: &SynthOptions) -> Self {
        let rows = options.rows;
        if rows == 0 {
            return Self::default();
        }
        let mut random = random_for(options.seed, Stream::Plan, 0);
        let roles = assign_roles(&mut random, rows);
        let mixed_rows = mixed_value_rows(rows);

        let mut problems: Vec<Problem> = Vec::new();
        let mut row_plans: Vec<RowPlan> = Vec::with_capacity(rows as usize);
        // Problems a later row may repeat or vary: input/output problems seen so far.
        let mut io_problems: Vec<u32> = Vec::new();
        let mut plain_io_problems: Vec<u32> = Vec::new();
        let mut variants_made = 0u32;
        for (row, role) in roles.iter().enumerate() {
            let new_problem =
                |random: &mut Random, functional: bool, problems: &[Problem]| Problem {
                    key: problems.len() as u64,
                    chars: log_normal_clamped(
                        random,
                        card::PROMPT_CHARS_MEDIAN,
                        (card::PROMPT_CHARS_P95 / card::PROMPT_CHARS_MEDIAN).ln() / 1.645,
                        card::PROMPT_CHARS_MIN,
                        card::PROMPT_CHARS_MAX,
                    ),
                    functional,
                    with_emoji: random.random_bool(EMOJI_SHARE),
                    whitespace_variant: None,
                };
            let problem_index = match role {
                Role::Repeat => io_problems[random.random_range(0..io_problems.len())],
                Role::Variant if !plain_io_problems.is_empty() => {
                    let source_position = random.random_range(0..plain_io_problems.len());
                    let source = plain_io_problems.swap_remove(source_position);
                    let mut problem = problems[source as usize].clone();
                    problem.key = problems.len() as u64;
                    problem.whitespace_variant = Some(WhitespaceVariant {
                        source,
                        style: variants_made,
                    });
                    variants_made += 1;
                    problems.push(problem);
                    problems.len() as u32 - 1
                }
                _ => {
                    let mut problem =
                        new_problem(&mut random, *role == Role::Functional, &problems);
                    match role {
                        Role::ShortestPrompt => problem.chars = card::PROMPT_CHARS_MIN,
                        Role::LongestPrompt => problem.chars = card::PROMPT_CHARS_MAX,
                        Role::EmojiEscaped => problem.with_emoji = true,
                        _ => {}
                    }
                    problems.push(problem);
                    problems.len() as u32 - 1
                }
            };
            if *role != Role::Functional && *role != Role::Repeat {
                io_problems.push(problem_index);
                if *role != Role::Variant {
                    plain_io_problems.push(problem_index);
                }
            }
            let tests = if *role == Role::Functional {
                let extra = log_normal_clamped(
                    &mut random,
                    card::ASSERTS_MEDIAN - f64::from(card::ASSERTS_MIN),
                    1.0,
                    0,
                    card::ASSERTS_MAX - card::ASSERTS_MIN,
                );
                TestsPlan::Functional {
                    asserts: card::ASSERTS_MIN + extra,
                }
            } else {
                let pairs = log_normal_clamped(
                    &mut random,
                    card::PAIRS_MEDIAN,
                    PAIRS_SPREAD,
                    card::PAIRS_MIN,
                    card::PAIRS_MAX,
                );
                let list_values = mixed_rows
                    .iter()
                    .position(|&mixed_row| mixed_row == row as u64)
                    .map_or(0, |position| card::LIST_VALUES_PER_MIXED_ROW[position]);
                TestsPlan::InputOutput {
                    pairs,
                    body_bytes: 0,
                    list_values,
                }
            };
            let ascii_only = *role == Role::EmojiEscaped || random.random_bool(ASCII_ONLY_SHARE);
            row_plans.push(RowPlan {
                problem: problem_index,
                tests,
                ascii_only,
            });
        }
        let mut plan = Self {
            problems,
            rows: row_plans,
            repeated_rows: roles.iter().filter(|role| **role == Role::Repeat).count() as u64,
            whitespace_variants: u64::from(variants_made),
        };
        plan.place_bounds(&mut random);
        plan.spread_test_bytes(&mut random, options);
        plan
    }

    /// Makes sure the card's minimum and maximum pair and assert counts occur.
    fn place_bounds(&mut self, random: &mut Random) {
        if (self.rows.len() as u64) < SPECIAL_ROWS_FROM {
            return;
        }
        let mut io_rows: Vec<usize> = (0..self.rows.len())
            .filter(|&row| {
                matches!(
                    self.rows[row].tests,
                    TestsPlan::InputOutput { list_values: 0, .. }
                )
            })
            .collect();
        io_rows.shuffle(random);
        // A few records at each bound, as in the card: one per 5,000 rows, plus one.
        let per_bound = 1 + self.rows.len() / 5_000;
        let bounds = std::iter::repeat_n(card::PAIRS_MIN, per_bound)
            .chain(std::iter::repeat_n(card::PAIRS_MAX, per_bound));
        for (row, bound) in io_rows.iter().zip(bounds) {
            if let TestsPlan::InputOutput { pairs, .. } = &mut self.rows[*row].tests {
                *pairs = bound;
            }
        }
        let functional_rows: Vec<usize> = (0..self.rows.len())
            .filter(|&row| matches!(self.rows[row].tests, TestsPlan::Functional { .. }))
            .collect();
        if functional_rows.len() >= 2 {
            for (row, bound) in functional_rows
                .iter()
                .zip([card::ASSERTS_MIN, card::ASSERTS_MAX])
            {
                self.rows[*row].tests = TestsPlan::Functional { asserts: bound };
            }
        }
    }

    /// Shares the file's byte budget for test strings among the input/output rows, in proportion
    /// to their pair count times a skewed factor, so the average record is close to the target.
    fn spread_test_bytes(&mut self, random: &mut Random, options: &SynthOptions) {
        let target_total = options.rows.saturating_mul(options.average_record_bytes) as f64;
        let mut fixed_total = 0.0;
        let mut weights = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let prompt_bytes = f64::from(self.problems[row.problem as usize].chars) * 1.04 + 8.0;
            fixed_total += RECORD_OVERHEAD_BYTES as f64 + prompt_bytes;
            match row.tests {
                TestsPlan::InputOutput { pairs, .. } => {
                    // The framing of the lists and their strings, in both label copies.
                    fixed_total += 2.0 * (29.0 + f64::from(pairs) * 4.0 * 2.0);
                    weights.push(f64::from(pairs) * unit_mean_factor(random, 0.8));
                }
                TestsPlan::Functional { asserts } => {
                    fixed_total += 2.0 * (18.0 + f64::from(asserts) * 40.0);
                    weights.push(0.0);
                }
            }
        }
        let free_per_copy = ((target_total - fixed_total) / 2.0).max(0.0);
        let weight_total: f64 = weights.iter().sum();
        if weight_total <= 0.0 {
            return;
        }
        for (row, weight) in self.rows.iter_mut().zip(weights) {
            if let TestsPlan::InputOutput { body_bytes, .. } = &mut row.tests {
                *body_bytes = (free_per_copy * weight / weight_total) as u64;
            }
        }
    }
}

/// Decides which rows repeat a prompt, which are functional, whitespace variants, or carry one of
/// the forced extremes. Row 0 is always a plain original so every later repeat has a source.
fn assign_roles(random: &mut Random, rows: u64) -> Vec<Role> {
    let row_count = rows as usize;
    let mut roles = vec![Role::Original; row_count];
    if row_count < 2 {
        return roles;
    }
    let repeats = scaled(rows, card::REPEATED_ROWS).min(row_count - 1);
    for position in index::sample(random, row_count - 1, repeats) {
        roles[position + 1] = Role::Repeat;
    }
    if rows < SPECIAL_ROWS_FROM {
        return roles;
    }
    let mixed_rows = mixed_value_rows(rows);
    let mut candidates: Vec<usize> = (1..row_count)
        .filter(|&row| roles[row] == Role::Original && !mixed_rows.contains(&(row as u64)))
        .collect();
    candidates.shuffle(random);
    let functional = scaled(rows, card::FUNCTIONAL_RECORDS).max(1);
    let variants = scaled(rows, card::WHITESPACE_VARIANTS).max(1);
    let mut special = Vec::new();
    special.extend(std::iter::repeat_n(Role::Functional, functional));
    special.extend([
        Role::ShortestPrompt,
        Role::LongestPrompt,
        Role::EmojiEscaped,
    ]);
    special.extend(std::iter::repeat_n(Role::Variant, variants));
    for (row, role) in candidates.into_iter().zip(special) {
        roles[row] = role;
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_card_plan_has_the_card_counts() {
        let plan = Plan::new(&SynthOptions::like_card(1));
        assert_eq!(plan.rows.len(), 15_001);
        assert_eq!(plan.repeated_rows, 1_426);
        assert_eq!(plan.whitespace_variants, 7);
        let functional = plan
            .rows
            .iter()
            .filter(|row| matches!(row.tests, TestsPlan::Functional { .. }))
            .count();
        assert_eq!(functional, 43);
        assert_eq!(mixed_value_rows(15_001), vec![11_367, 12_567, 14_571]);
        let list_values: u32 = plan
            .rows
            .iter()
            .map(|row| match row.tests {
                TestsPlan::InputOutput { list_values, .. } => list_values,
                TestsPlan::Functional { .. } => 0,
            })
            .sum();
        assert_eq!(list_values, 4);
    }

    #[test]
    fn small_files_still_get_every_special_row() {
        for rows in [20, 21, 57, 200] {
            let plan = Plan::new(&SynthOptions::small(rows, 3));
            assert_eq!(mixed_value_rows(rows).len(), 3);
            assert!(plan.whitespace_variants >= 1);
            assert!(
                plan.rows
                    .iter()
                    .any(|row| matches!(row.tests, TestsPlan::Functional { .. }))
            );
            assert!(
                plan.problems
                    .iter()
                    .any(|problem| problem.chars == card::PROMPT_CHARS_MIN)
            );
        }
    }

    #[test]
    fn tiny_files_plan_without_panicking() {
        for rows in 0..20 {
            assert_eq!(
                Plan::new(&SynthOptions::small(rows, 3)).rows.len() as u64,
                rows
            );
        }
    }
}
