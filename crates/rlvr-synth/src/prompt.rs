//! Prompt texts: multi-line programming problems in the styles the released prompts use
//! (Codeforces-like sections, AtCoder-like constraints, "You are an expert Python programmer"
//! and "Solve the following coding problem" instructions, functional tasks naming the function
//! their asserts call), cut to an exact length in code points. Some use `≤`, `×`, `—`, CJK or
//! emoji so code-point and byte counts differ; many use LaTeX with backslashes and quotes, which
//! the JSON text must escape.

use rand::RngExt;

use crate::plan::Problem;
use crate::random::{Random, Stream, random_for};

/// The argument a functional task's function takes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ParameterKind {
    Integer,
    Text,
    IntegerList,
}

/// What a functional task's function returns.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ReturnKind {
    Boolean,
    Integer,
    Text,
}

/// A function that a functional task asks for and its asserts call.
#[derive(Debug)]
pub(crate) struct FunctionSpec {
    pub(crate) name: &'static str,
    pub(crate) parameter: &'static str,
    pub(crate) parameter_kind: ParameterKind,
    pub(crate) returns: ReturnKind,
    description: &'static str,
}

const FUNCTIONS: &[FunctionSpec] = &[
    FunctionSpec {
        name: "valid_mersenne",
        parameter: "n",
        parameter_kind: ParameterKind::Integer,
        returns: ReturnKind::Boolean,
        description: "returns True if n is a Mersenne prime exponent, that is, if 2**n - 1 is prime",
    },
    FunctionSpec {
        name: "is_prime",
        parameter: "n",
        parameter_kind: ParameterKind::Integer,
        returns: ReturnKind::Boolean,
        description: "returns True if the integer n is a prime number and False otherwise",
    },
    FunctionSpec {
        name: "digital_root",
        parameter: "n",
        parameter_kind: ParameterKind::Integer,
        returns: ReturnKind::Integer,
        description: "repeatedly sums the digits of n until a single digit remains and returns it",
    },
    FunctionSpec {
        name: "count_vowels",
        parameter: "s",
        parameter_kind: ParameterKind::Text,
        returns: ReturnKind::Integer,
        description: "returns the number of vowels (a, e, i, o, u) in the string s",
    },
    FunctionSpec {
        name: "reverse_words",
        parameter: "s",
        parameter_kind: ParameterKind::Text,
        returns: ReturnKind::Text,
        description: "returns the string s with the order of its words reversed",
    },
    FunctionSpec {
        name: "is_palindrome",
        parameter: "s",
        parameter_kind: ParameterKind::Text,
        returns: ReturnKind::Boolean,
        description: "checks whether s reads the same forwards and backwards, ignoring case",
    },
    FunctionSpec {
        name: "max_subarray_sum",
        parameter: "arr",
        parameter_kind: ParameterKind::IntegerList,
        returns: ReturnKind::Integer,
        description: "returns the largest sum of a contiguous, non-empty subarray of arr",
    },
    FunctionSpec {
        name: "find_missing",
        parameter: "arr",
        parameter_kind: ParameterKind::IntegerList,
        returns: ReturnKind::Integer,
        description: "returns the single number missing from a list holding 1..n with one value removed",
    },
    FunctionSpec {
        name: "longest_run",
        parameter: "arr",
        parameter_kind: ParameterKind::IntegerList,
        returns: ReturnKind::Integer,
        description: "returns the length of the longest run of equal adjacent elements",
    },
    FunctionSpec {
        name: "to_camel_case",
        parameter: "s",
        parameter_kind: ParameterKind::Text,
        returns: ReturnKind::Text,
        description: "converts a dash or underscore delimited string into camel case",
    },
];

const NAMES: &[&str] = &[
    "Vasya",
    "Petya",
    "Alice",
    "Bob",
    "Monocarp",
    "Polycarp",
    "Chef",
    "Takahashi",
    "Aoki",
    "Zoe",
    "Nastya",
    "Timur",
    "Luntik",
    "Ehab",
];
const OBJECTS: &[&str] = &[
    "array",
    "string",
    "tree",
    "graph",
    "grid",
    "sequence",
    "permutation",
    "matrix",
    "binary string",
    "multiset",
];
const GOALS: &[&str] = &[
    "make all elements of the array equal",
    "sort the sequence in non-decreasing order",
    "make the string a palindrome",
    "reach the cell $(n, m)$ from the cell $(1, 1)$",
    "remove every blocked cell",
    "make the sum of the array divisible by $k$",
    "connect all vertices of the graph",
];
const TITLES: &[&str] = &[
    "A. Array Balancing",
    "B. Permutation Swap",
    "C. Grid Paths",
    "D. Tree Queries",
    "E. Binary String Game",
    "F. Segment Covering",
    "Sereja and Brackets",
    "Minimum Cost Path",
];
const CJK_NOTES: &[&str] = &[
    "（提示：注意数据范围，请使用快速输入输出。）",
    "入力は全て整数である。",
    "注意：答案可能很大。",
];
const EMOJI: &[&str] = &["😀", "🚀", "🎉", "🐍"];

const EXPERT_PREFIX: &str = "You are an expert Python programmer. You will be given a question (problem specification) and will generate a correct Python program that matches the specification and passes all tests.\n\n";
const EXPERT_SUFFIX: &str = "\n\n### Format: Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python program runs, it reads the inputs, runs the algorithm, and writes output to STDOUT.\n```python\n# YOUR CODE HERE\n```\n\n### Answer: (use the provided format with backticks)\n";
const SOLVE_PREFIX: &str =
    "Solve the following coding problem using the programming language python:\n\n";
const SOLVE_SUFFIX: &str = "\n\nThe input will be given via stdin and the output should be printed to stdout by your code.\n\nNow solve the problem by providing the code.";

/// The function a functional problem names. Drawn from the problem's own stream first, so the
/// prompt and the asserts always agree.
pub(crate) fn function_for(random: &mut Random) -> &'static FunctionSpec {
    &FUNCTIONS[random.random_range(0..FUNCTIONS.len())]
}

/// A problem's text, exactly `problem.chars` code points long (a whitespace variant may be one
/// longer than its source).
pub(crate) fn render_prompt(seed: u64, problems: &[Problem], problem: &Problem) -> String {
    if let Some(variant) = problem.whitespace_variant {
        let source = &problems[variant.source as usize];
        return apply_whitespace_variant(render_prompt(seed, problems, source), variant.style);
    }
    let mut random = random_for(seed, Stream::Problem, problem.key);
    let function = function_for(&mut random);
    let unicode_math = random.random_bool(0.35);
    let (head, tail) = if problem.functional {
        functional_frame(&mut random, function)
    } else {
        input_output_frame(&mut random, unicode_math)
    };
    let target = problem.chars as usize;
    let frame_chars = head.chars().count() + tail.chars().count();
    let (head, tail) = if frame_chars + 80 <= target {
        (head, tail)
    } else {
        (String::new(), String::new())
    };
    let body_chars = target - head.chars().count() - tail.chars().count();
    let mut body = String::with_capacity(body_chars * 2);
    if problem.with_emoji {
        body.push_str(&format!(
            "Have fun {} ",
            EMOJI[random.random_range(0..EMOJI.len())]
        ));
    }
    if problem.functional {
        body.push_str(&format!(
            "The function `{}` {}. ",
            function.name, function.description
        ));
    }
    let mut sentences_in_paragraph = 0;
    let mut written_chars = body.chars().count();
    while written_chars < body_chars {
        let next = sentence(&mut random, unicode_math);
        written_chars += next.chars().count() + 1;
        body.push_str(&next);
        sentences_in_paragraph += 1;
        if sentences_in_paragraph >= random.random_range(3..7) {
            body.push_str("\n\n");
            written_chars += 1;
            sentences_in_paragraph = 0;
        } else {
            body.push(' ');
        }
    }
    let mut text = head;
    text.extend(body.chars().take(body_chars.saturating_sub(1)));
    if body_chars > 0 {
        text.push('.');
    }
    text.push_str(&tail);
    text
}

/// The same text after one whitespace change that Python's `" ".join(text.split())` undoes.
/// Style 1 uses U+001F, which Python's `str.isspace` counts as whitespace and Rust's
/// `char::is_whitespace` does not.
pub(crate) fn apply_whitespace_variant(mut text: String, style: u32) -> String {
    let replacement = match style % 4 {
        0 => None,
        1 => Some("\u{1f}"),
        2 => Some("  "),
        _ => Some("\t"),
    };
    match (replacement, text.find(' ')) {
        (Some(replacement), Some(position)) => {
            text.replace_range(position..position + 1, replacement)
        }
        _ => text.push('\n'),
    }
    text
}

fn pick<'a>(random: &mut Random, items: &[&'a str]) -> &'a str {
    items[random.random_range(0..items.len())]
}

fn at_most(unicode_math: bool) -> &'static str {
    if unicode_math { "≤" } else { "\\le" }
}

/// Prompts with Unicode math also use the em dash; the others stay ASCII except for rare
/// notes, names and emoji, so both kinds of prompt are common.
fn dash(unicode_math: bool) -> &'static str {
    if unicode_math { "—" } else { "-" }
}

fn power_of_ten(random: &mut Random, unicode_math: bool) -> String {
    let exponent = random.random_range(3..19);
    match (random.random_bool(0.3), unicode_math) {
        (true, true) => format!("2 × 10^{exponent}"),
        (true, false) => format!("2 \\cdot 10^{{{exponent}}}"),
        (false, _) => format!("10^{{{exponent}}}"),
    }
}

fn sentence(random: &mut Random, unicode_math: bool) -> String {
    let le = at_most(unicode_math);
    let dash = dash(unicode_math);
    match random.random_range(0..14) {
        0 => format!(
            "{} has {} {} of ${}$ elements.",
            pick(random, NAMES),
            "an",
            pick(random, OBJECTS),
            random.random_range(2..1000)
        ),
        1 => format!(
            "You are given a {} $a$ of length $n$ ($1 {le} n {le} {}$).",
            pick(random, OBJECTS),
            power_of_ten(random, unicode_math)
        ),
        2 => format!(
            "In one operation, you can choose an index $i$ ($1 {le} i {le} n$) and replace $a_i$ with $a_i + {}$.",
            random.random_range(1..10)
        ),
        3 => format!(
            "Find the {} number of operations required to {}.",
            pick(random, &["minimum", "maximum"]),
            pick(random, GOALS)
        ),
        4 => format!(
            "It is guaranteed that the sum of $n$ over all test cases does not exceed ${}$.",
            power_of_ten(random, unicode_math)
        ),
        5 => format!(
            "{} wants to know the number of pairs $(i, j)$ such that $i < j$ and $a_i + a_j$ is divisible by ${}$.",
            pick(random, NAMES),
            random.random_range(2..100)
        ),
        6 => "Since the answer can be very large, print it modulo $998\\,244\\,353$.".to_string(),
        7 => "Print \"YES\" (without quotes) if it is possible, and \"NO\" otherwise.".to_string(),
        8 => "Each cell of the grid is either empty (denoted by '.') or blocked (denoted by '#')."
            .to_string(),
        9 => format!(
            "The distance between cells is {}, and {} moves at most {} cells per second.",
            if unicode_math {
                "|x₁ − x₂| + |y₁ − y₂|"
            } else {
                "|x1 - x2| + |y1 - y2|"
            },
            pick(random, NAMES),
            random.random_range(1..9)
        ),
        10 if unicode_math => format!(
            "{} {}",
            pick(random, &["Note:", "Remark —"]),
            pick(random, CJK_NOTES)
        ),
        10 => "Note: the input is large, so use fast input and output.".to_string(),
        11 => format!(
            "A {} is called good if no two adjacent elements are equal {dash} for example, [{}, {}, {}] is good.",
            pick(random, OBJECTS),
            random.random_range(1..9),
            random.random_range(10..19),
            random.random_range(1..9)
        ),
        12 => format!(
            "[image] The figure shows the {} for the {} test case.",
            pick(random, OBJECTS),
            pick(random, &["first", "second", "third"])
        ),
        _ => format!(
            "{} and {} play a game on a {} with {} turns; {} moves first.",
            pick(random, NAMES),
            pick(random, NAMES),
            pick(random, OBJECTS),
            random.random_range(1..100),
            pick(random, NAMES)
        ),
    }
}

fn input_output_frame(random: &mut Random, unicode_math: bool) -> (String, String) {
    let le = at_most(unicode_math);
    let dash = dash(unicode_math);
    let style = random.random_range(0..10);
    let (prefix, suffix) = match style {
        0..=2 => (EXPERT_PREFIX, EXPERT_SUFFIX),
        3..=6 => (SOLVE_PREFIX, SOLVE_SUFFIX),
        _ => ("", ""),
    };
    let mut head = prefix.to_string();
    if random.random_bool(0.5) {
        head.push_str(pick(random, TITLES));
        head.push_str("\n\n");
    }
    let count = random.random_range(1..8);
    let values: Vec<String> = (0..count)
        .map(|_| random.random_range(1..100).to_string())
        .collect();
    let answer = random.random_range(0..1000);
    let limit = power_of_ten(random, unicode_math);
    let tail = if random.random_bool(0.6) {
        format!(
            "\n\n-----Input-----\n\nThe first line contains a single integer $n$ ($1 {le} n {le} {limit}$) {dash} the size of the {object}.\n\nThe second line contains $n$ integers $a_1, a_2, \\ldots, a_n$.\n\n-----Output-----\n\nPrint one integer {dash} the answer.\n\n-----Examples-----\nInput\n{count}\n{values}\n\nOutput\n{answer}\n{suffix}",
            object = pick(random, OBJECTS),
            values = values.join(" "),
        )
    } else {
        format!(
            "\n\nConstraints\n\n - 1 {le} N {le} {limit}\n - All values in input are integers.\n\nInput\n\nInput is given from Standard Input in the following format:\nN\nA_1 A_2 \\ldots A_N\n\nOutput\n\nPrint the answer.\n\nSample Input 1\n\n{count}\n{values}\n\nSample Output 1\n\n{answer}\n{suffix}",
            values = values.join(" "),
        )
    };
    (head, tail)
}

fn functional_frame(random: &mut Random, function: &FunctionSpec) -> (String, String) {
    let prefix = if random.random_bool(0.3) {
        EXPERT_PREFIX
    } else {
        ""
    };
    let head = format!(
        "{prefix}Write a function `{}({})` that {}.\n\n",
        function.name, function.parameter, function.description
    );
    let tail = format!(
        "\n\nExamples:\n```python\n>>> {name}({example})\n```\n\nYou should write self-contained code starting with:\n```python\ndef {name}({parameter}):\n```",
        name = function.name,
        parameter = function.parameter,
        example = match function.parameter_kind {
            ParameterKind::Integer => "7".to_string(),
            ParameterKind::Text => "'hello world'".to_string(),
            ParameterKind::IntegerList => "[1, 2, 3]".to_string(),
        },
    );
    (head, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(chars: u32, functional: bool) -> Problem {
        Problem {
            key: u64::from(chars),
            chars,
            functional,
            with_emoji: chars.is_multiple_of(2),
            whitespace_variant: None,
        }
    }

    #[test]
    fn prompts_have_the_exact_length_in_code_points() {
        for chars in [44, 45, 120, 1_747, 3_225, 9_363] {
            for functional in [false, true] {
                let problem = problem(chars, functional);
                let text = render_prompt(5, std::slice::from_ref(&problem), &problem);
                assert_eq!(text.chars().count(), chars as usize, "{text}");
            }
        }
    }

    #[test]
    fn functional_prompts_name_their_function() {
        let problem = problem(2_000, true);
        let text = render_prompt(5, std::slice::from_ref(&problem), &problem);
        let function = function_for(&mut random_for(5, Stream::Problem, problem.key));
        assert!(text.contains(&format!("def {}(", function.name)), "{text}");
    }

    #[test]
    fn whitespace_variants_normalize_to_their_source() {
        let python_normalize = |text: &str| {
            rlvr_python_compat::text::python_split_whitespace(text)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let source = "Print the answer.\n\nSample".to_string();
        for style in 0..4 {
            let variant = apply_whitespace_variant(source.clone(), style);
            assert_ne!(variant, source);
            assert_eq!(python_normalize(&variant), python_normalize(&source));
        }
    }
}
