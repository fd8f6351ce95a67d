//! Code extraction: how each profile finds the program inside a model response.

use std::sync::LazyLock;

use regex::Regex;

use rlvr_python_compat::text::python_strip;

/// Which extraction rule a profile uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Extraction {
    /// Klear: the first match of `` </think>.*```python\n(.*?)\n``` `` (DOTALL), which is the
    /// last lowercase `python` block after the first `</think>` whose closer starts a line;
    /// an empty body is no code.
    KlearPattern,
    /// Code-R1: inside the last `<answer>…</answer>` (stripped; the whole response when there
    /// is none) every block matching ```` ```(\w+)?\n(.*?)\n``` ```` joined with `"\n"`, stripped.
    CodeR1AnswerBlocks,
    /// rllm: the last block matching ```` ```(\w+)?\n(.*?)``` ```` (any tag, any closer), stripped.
    LastFencedBlock,
    /// verl prime_code: `response.split("```python")[-1].split("```")[0]`; without a
    /// ```` ```python ```` block that is the whole response.
    PrimeSplit,
    /// LiveCodeBench: the lines between the last two lines that contain ```` ``` ````.
    LiveCodeBenchFenceLines,
    /// Ours: after the last `</think>` (whole response without one), the last closed fenced
    /// block tagged `python`, `py`, `python3` (any case) or untagged; CRLF and indented fences
    /// accepted, the opener's indentation removed from the body.
    Judge,
}

static KLEAR_PATTERN: LazyLock<Regex> =
    LazyLock::new(|| compile(r"(?s)</think>.*```python\n(.*?)\n```"));
static ANSWER_PATTERN: LazyLock<Regex> = LazyLock::new(|| compile(r"(?s)<answer>(.*?)</answer>"));
static CODE_R1_BLOCK: LazyLock<Regex> = LazyLock::new(|| compile(r"(?s)```(?:\w+)?\n(.*?)\n```"));
static RLLM_BLOCK: LazyLock<Regex> = LazyLock::new(|| compile(r"(?s)```(?:\w+)?\n(.*?)```"));

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern)
        .unwrap_or_else(|error| panic!("extraction pattern {pattern:?} is valid: {error}"))
}

impl Extraction {
    /// The code found in the response, or `None` when the profile sees no code.
    pub fn extract(self, response: &str) -> Option<String> {
        match self {
            Self::KlearPattern => KLEAR_PATTERN
                .captures(response)
                .and_then(|captures| captures.get(1))
                .map(|body| body.as_str().to_owned())
                .filter(|code| !code.is_empty()),
            Self::CodeR1AnswerBlocks => {
                let answer = ANSWER_PATTERN
                    .captures_iter(response)
                    .last()
                    .and_then(|captures| captures.get(1))
                    .map_or(response, |body| python_strip(body.as_str()));
                let blocks: Vec<&str> = CODE_R1_BLOCK
                    .captures_iter(answer)
                    .filter_map(|captures| captures.get(1).map(|body| body.as_str()))
                    .collect();
                non_empty(python_strip(&blocks.join("\n")))
            }
            Self::LastFencedBlock => RLLM_BLOCK
                .captures_iter(response)
                .last()
                .and_then(|captures| captures.get(1))
                .and_then(|body| non_empty(python_strip(body.as_str()))),
            Self::PrimeSplit => {
                let after_tag = response.rsplit("```python").next().unwrap_or(response);
                Some(
                    after_tag
                        .split("```")
                        .next()
                        .unwrap_or(after_tag)
                        .to_owned(),
                )
            }
            Self::LiveCodeBenchFenceLines => {
                let lines: Vec<&str> = response.split('\n').collect();
                let fence_lines: Vec<usize> = lines
                    .iter()
                    .enumerate()
                    .filter(|(_, line)| line.contains("```"))
                    .map(|(index, _)| index)
                    .collect();
                match fence_lines.as_slice() {
                    [.., opener, closer] => Some(lines[opener + 1..*closer].join("\n")),
                    _ => None,
                }
                .and_then(|code| non_empty(&code))
            }
            Self::Judge => judge_extract(response),
        }
    }

    /// One line for `--list-profiles`.
    pub fn describe(self) -> &'static str {
        match self {
            Self::KlearPattern => {
                "last ```python block after the first </think>; closer `\\n```` at line start; LF only"
            }
            Self::CodeR1AnswerBlocks => {
                "all fenced blocks (any tag) in the last <answer>, joined with \\n"
            }
            Self::LastFencedBlock => "last fenced block, any tag, any closer",
            Self::PrimeSplit => {
                "split(\"```python\")[-1].split(\"```\")[0]; whole response without a block"
            }
            Self::LiveCodeBenchFenceLines => "lines between the last two lines containing ```",
            Self::Judge => {
                "last python/py/python3/untagged block after the last </think>; CRLF and indented fences ok"
            }
        }
    }
}

fn non_empty(code: &str) -> Option<String> {
    (!code.is_empty()).then(|| code.to_owned())
}

/// A fence line: its indentation, the backtick count and the info string.
struct Fence<'line> {
    indentation: usize,
    ticks: usize,
    info: &'line str,
}

fn parse_fence(line: &str) -> Option<Fence<'_>> {
    let content = line.trim_start_matches([' ', '\t']);
    let indentation = line.len() - content.len();
    let ticks = content.len() - content.trim_start_matches('`').len();
    (ticks >= 3).then(|| Fence {
        indentation,
        ticks,
        info: content[ticks..].trim(),
    })
}

fn is_python_info(info: &str) -> bool {
    let language = info.split_whitespace().next().unwrap_or("");
    language.is_empty()
        || ["python", "py", "python3"]
            .iter()
            .any(|name| language.eq_ignore_ascii_case(name))
}

fn judge_extract(response: &str) -> Option<String> {
    judge_blocks(response)
        .into_iter()
        .rev()
        .find(|block| is_python_info(&block.info))
        .map(|block| block.code)
        .filter(|code| !python_strip(code).is_empty())
}

/// A closed fenced block as the judge reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FencedBlock {
    /// The opener's info string (trimmed; empty when untagged).
    pub info: String,
    /// The body, the opener's indentation removed, LF line ends.
    pub code: String,
}

/// Every closed fenced block after the last `</think>` (the whole response without one), in
/// order: CRLF and indented fences accepted, longer closers too; an opener with backticks in
/// its info string is inline code, not a fence; an unclosed block is not a block.
pub fn judge_blocks(response: &str) -> Vec<FencedBlock> {
    let normalised = response.replace("\r\n", "\n");
    let region = match normalised.rfind("</think>") {
        Some(position) => &normalised[position + "</think>".len()..],
        None => normalised.as_str(),
    };
    let mut blocks = Vec::new();
    let mut open: Option<(Fence<'_>, Vec<&str>)> = None;
    for line in region.split('\n') {
        match open.take() {
            None => {
                open = parse_fence(line)
                    .filter(|fence| !fence.info.contains('`'))
                    .map(|fence| (fence, Vec::new()));
            }
            Some((fence, mut body)) => {
                let closes = parse_fence(line)
                    .is_some_and(|closer| closer.info.is_empty() && closer.ticks >= fence.ticks);
                if closes {
                    let dedented: Vec<&str> = body
                        .iter()
                        .map(|body_line| remove_indentation(body_line, fence.indentation))
                        .collect();
                    blocks.push(FencedBlock {
                        info: fence.info.to_owned(),
                        code: dedented.join("\n"),
                    });
                } else {
                    body.push(line);
                    open = Some((fence, body));
                }
            }
        }
    }
    blocks
}

fn remove_indentation(line: &str, width: usize) -> &str {
    let removable = line
        .bytes()
        .take(width)
        .take_while(|byte| *byte == b' ' || *byte == b'\t')
        .count();
    &line[removable..]
}
