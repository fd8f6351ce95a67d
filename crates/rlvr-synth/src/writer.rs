//! Rendering rows in parallel and writing them in order. Rows are rendered a batch at a time on
//! the rayon pool while the previous batch is written, each row from its own random stream, so
//! the file is the same whatever the thread count. Memory is bounded by two batches; the file is
//! never held whole.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::RngExt;
use rayon::prelude::*;
use rlvr_python_compat::dumps::push_string;

use crate::faults::{InjectedLine, InjectionKind};
use crate::label::{push_functional_label, push_input_output_label};
use crate::plan::{Plan, RECORD_OVERHEAD_BYTES, TestsPlan, mixed_value_rows};
use crate::pool::TextPool;
use crate::prompt::{function_for, render_prompt};
use crate::random::{Stream, random_for};
use crate::summary::{ExpectedFigures, ExpectedSpread};
use crate::{SynthError, SynthOptions, SynthSummary};

/// Bytes of rendered rows per batch (a batch holds at least one row).
const BATCH_BYTES: u64 = 32 << 20;
/// Largest text pool, small enough to stay in the last-level cache (slices start at random
/// places); smaller files get a pool of an eighth of their size.
const MAX_POOL_BYTES: u64 = 4 << 20;
const MIN_POOL_BYTES: u64 = 64 << 10;

/// Where the list of injected lines is written next to `out`: `OUT.faults.json`.
pub fn faults_sidecar_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".faults.json");
    PathBuf::from(name)
}

/// Writes a synthetic file at `path` and, when faults are injected, the sidecar
/// [`faults_sidecar_path`] listing them as JSON. Both appear (replacing earlier ones) only when
/// complete, together; on an error neither does.
pub fn write_synthetic(
    path: impl AsRef<Path>,
    options: &SynthOptions,
) -> Result<SynthSummary, SynthError> {
    let path = path.as_ref();
    options.check()?;
    let mut file = rlvr_output::AtomicFile::create(path)?;
    let summary = write_synthetic_to(&mut file, options).map_err(|error| match error {
        SynthError::Stream(source) => SynthError::Write(file.error(source)),
        other => other,
    })?;
    let mut outputs = vec![file];
    if options.inject_faults {
        let sidecar = serde_json::json!({
            "file": path.display().to_string(),
            "rows": summary.rows,
            "lines": summary.lines,
            "injected": summary.injected,
        });
        let text = serde_json::to_string_pretty(&sidecar).map_err(SynthError::Encode)?;
        let mut sidecar_file = rlvr_output::AtomicFile::create(faults_sidecar_path(path))?;
        sidecar_file
            .write_all((text + "\n").as_bytes())
            .map_err(|source| sidecar_file.error(source))?;
        outputs.push(sidecar_file);
    }
    rlvr_output::commit_all(outputs)?;
    Ok(summary)
}

/// Writes a synthetic file to any writer; the injected lines are only in the returned summary.
pub fn write_synthetic_to(
    writer: &mut impl Write,
    options: &SynthOptions,
) -> Result<SynthSummary, SynthError> {
    options.check()?;
    let started = Instant::now();
    let plan = Plan::new(options);
    let pool_bytes = (options.rows.saturating_mul(options.average_record_bytes) / 8)
        .clamp(MIN_POOL_BYTES, MAX_POOL_BYTES);
    let pool = TextPool::new(options.seed, pool_bytes as usize);
    let context = RenderContext {
        seed: options.seed,
        plan: &plan,
        pool: &pool,
    };

    let injections = if options.inject_faults {
        InjectionKind::ALL.to_vec()
    } else {
        Vec::new()
    };
    let mut output = OrderedOutput::new(writer, options, injections);
    let batch_rows = (BATCH_BYTES / options.average_record_bytes).clamp(1, 4096) as usize;
    let row_count = plan.rows.len();
    let mut pending: Vec<RenderedRow> = Vec::new();
    let mut batch_start = 0;
    while batch_start < row_count || !pending.is_empty() {
        let batch_end = (batch_start + batch_rows).min(row_count);
        // Render the next batch on the current rayon pool while this thread writes the previous
        // one; the writer stays on this thread, so it need not be `Send`.
        let context = &context;
        let mut rendered = Vec::new();
        let written = rayon::in_place_scope(|scope| {
            let rendered = &mut rendered;
            scope.spawn(move |_| {
                *rendered = (batch_start..batch_end)
                    .into_par_iter()
                    .map(|row| context.render_row(row))
                    .collect::<Vec<_>>();
            });
            output.write_rows(std::mem::take(&mut pending))
        });
        written?;
        pending = rendered;
        batch_start = batch_end;
    }
    output.finish()?;

    let mut figures = output.figures;
    figures.unique_prompts_exact = options.rows - plan.repeated_rows;
    figures.unique_prompts_normalized = figures.unique_prompts_exact - plan.whitespace_variants;
    figures.repeated_prompt_rows = plan.repeated_rows;
    figures.distinct_hashes = figures.unique_prompts_exact;
    figures.prompt_chars = ExpectedSpread::of(&mut output.prompt_chars);
    figures.io_pairs_per_record = ExpectedSpread::of(&mut output.pairs);
    figures.functional_tests_per_record = ExpectedSpread::of(&mut output.asserts);
    Ok(SynthSummary {
        rows: options.rows,
        lines: output.lines,
        bytes: output.bytes,
        seconds: started.elapsed().as_secs_f64(),
        expected: figures,
        injected: output.injected,
    })
}

struct RenderContext<'a> {
    seed: u64,
    plan: &'a Plan,
    pool: &'a TextPool,
}

struct RenderedRow {
    row: usize,
    bytes: Vec<u8>,
    prompt_chars: u64,
    tests: TestsPlan,
}

impl RenderContext<'_> {
    fn render_row(&self, row: usize) -> RenderedRow {
        let row_plan = &self.plan.rows[row];
        let problem = &self.plan.problems[row_plan.problem as usize];
        let prompt = render_prompt(self.seed, &self.plan.problems, problem);
        let mut random = random_for(self.seed, Stream::Row, row as u64);

        let mut label = Vec::new();
        match row_plan.tests {
            TestsPlan::InputOutput {
                pairs,
                body_bytes,
                list_values,
            } => {
                label.reserve(body_bytes as usize + pairs as usize * 8 + 64);
                push_input_output_label(
                    &mut label,
                    &mut random,
                    self.pool,
                    pairs,
                    body_bytes,
                    list_values,
                );
            }
            TestsPlan::Functional { asserts } => {
                let function =
                    function_for(&mut random_for(self.seed, Stream::Problem, problem.key));
                push_functional_label(
                    &mut label,
                    &mut random,
                    function,
                    asserts,
                    row_plan.ascii_only,
                );
            }
        }
        let mut hash_random = random_for(self.seed, Stream::Hash, problem.key);
        let hash = format!(
            "{:016x}{:016x}",
            hash_random.random::<u64>(),
            hash_random.random::<u64>()
        );

        let mut bytes =
            Vec::with_capacity(2 * label.len() + prompt.len() * 2 + RECORD_OVERHEAD_BYTES as usize);
        bytes.extend_from_slice(b"{\"prompt\": [{\"role\": \"user\", \"content\": ");
        push_string(&mut bytes, prompt.as_bytes(), row_plan.ascii_only);
        bytes.extend_from_slice(b"}], \"label\": ");
        bytes.extend_from_slice(&label);
        bytes.extend_from_slice(b", \"metadata\": {\"data_type\": \"code\", \"data_source\": \"coder1_longcot\", \"ability\": \"code\", \"style\": \"rule\", \"hash\": \"");
        bytes.extend_from_slice(hash.as_bytes());
        bytes.extend_from_slice(b"\", \"ground_truth\": ");
        bytes.extend_from_slice(&label);
        bytes.extend_from_slice(b"}}\n");
        RenderedRow {
            row,
            bytes,
            prompt_chars: prompt.chars().count() as u64,
            tests: row_plan.tests,
        }
    }
}

/// Writes rendered rows in order, slots injected lines in at their planned rows, and tallies the
/// figures of the summary.
struct OrderedOutput<'a, W: Write> {
    writer: &'a mut W,
    seed: u64,
    rows: u64,
    /// Injected kinds with the generated row they precede, in order.
    schedule: Vec<(u64, InjectionKind)>,
    next_injection: usize,
    mixed_rows: Vec<u64>,
    lines: u64,
    bytes: u64,
    figures: ExpectedFigures,
    prompt_chars: Vec<u64>,
    pairs: Vec<u64>,
    asserts: Vec<u64>,
    injected: Vec<InjectedLine>,
}

impl<'a, W: Write> OrderedOutput<'a, W> {
    fn new(writer: &'a mut W, options: &SynthOptions, injections: Vec<InjectionKind>) -> Self {
        let count = injections.len() as u64;
        let schedule = injections
            .into_iter()
            .enumerate()
            .map(|(index, kind)| ((index as u64 + 1) * options.rows / (count + 1), kind))
            .collect();
        Self {
            writer,
            seed: options.seed,
            rows: options.rows,
            schedule,
            next_injection: 0,
            mixed_rows: mixed_value_rows(options.rows),
            lines: 0,
            bytes: 0,
            figures: ExpectedFigures {
                examples: options.rows,
                ..ExpectedFigures::default()
            },
            prompt_chars: Vec::with_capacity(options.rows as usize),
            pairs: Vec::new(),
            asserts: Vec::new(),
            injected: Vec::new(),
        }
    }

    fn write_line(&mut self, line: &[u8]) -> Result<(), SynthError> {
        self.writer.write_all(line).map_err(SynthError::Stream)?;
        self.lines += 1;
        self.bytes += line.len() as u64;
        Ok(())
    }

    /// Writes the injected lines scheduled before generated row `before_row`.
    fn inject_until(&mut self, before_row: u64) -> Result<(), SynthError> {
        while let Some(&(position, kind)) = self.schedule.get(self.next_injection) {
            if position > before_row {
                break;
            }
            self.next_injection += 1;
            let line_start = self.bytes;
            self.write_line(&kind.line(self.seed))?;
            self.injected.push(InjectedLine {
                kind,
                row: self.lines - 1,
                line: self.lines,
                byte_offset: line_start,
                expect: kind.expect(),
                check: kind.check(),
            });
        }
        Ok(())
    }

    fn write_rows(&mut self, rendered: Vec<RenderedRow>) -> Result<(), SynthError> {
        for row in rendered {
            self.inject_until(row.row as u64)?;
            if self.mixed_rows.contains(&(row.row as u64)) {
                self.figures.mixed_value_rows.push(self.lines);
            }
            self.write_line(&row.bytes)?;
            self.prompt_chars.push(row.prompt_chars);
            self.tally_tests(row.tests);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SynthError> {
        self.inject_until(self.rows)
    }

    fn tally_tests(&mut self, tests: TestsPlan) {
        match tests {
            TestsPlan::InputOutput {
                pairs, list_values, ..
            } => {
                self.figures.io_records += 1;
                self.figures.io_pairs_total += u64::from(pairs);
                self.figures.list_values_total += 2 * u64::from(list_values);
                self.pairs.push(u64::from(pairs));
            }
            TestsPlan::Functional { asserts } => {
                self.figures.functional_records += 1;
                self.figures.functional_tests_total += u64::from(asserts);
                self.asserts.push(u64::from(asserts));
            }
        }
    }
}
