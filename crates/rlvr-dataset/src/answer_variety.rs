//! Statements that accept more than one answer (issue 25): "If there are multiple answers,
//! print any of them", "in any order", "absolute or relative error does not exceed 10^{-6}".
//! Exact comparison against the one reference output scores an honest answer 0 on such a
//! record, reward noise a trainer cannot tell from a wrong answer; `rlvr audit` flags them
//! (`answer_may_vary`) and `rlvr verify --dataset` marks their results.
//!
//! The rule reads the statement sentence by sentence (a sentence ends at `.`, `!` or `?`
//! followed by white space, or at a blank line; single line breaks are spaces, so hard-wrapped
//! statements read whole) with LaTeX dollar signs dropped and white space collapsed, and looks
//! for three kinds of phrasing:
//!
//! * `any_answer`: a "several answers" clause (`If there are multiple answers`, `If the answer
//!   is not unique`, `If more than one route is possible`) followed in the same sentence by a
//!   choice (`any`, `either`, `arbitrary`, `one of them`); or an output verb right before
//!   `any` and what is chosen (`print any of them`, `return any possible rearrangement`, `find
//!   any valid permutation`, `output any.`); or `any ... will be accepted`; or a special judge.
//!   A "several answers" clause without a choice (`print the lexicographically smallest one`)
//!   is not a match, nor is `any` after other verbs (`choose any two elements`).
//! * `any_order`: an output verb, at most seven words, then `in any order` (`You may return
//!   the answer in any order`; not `performing the operations in any order`, not `the edges
//!   are given in arbitrary order`), `can be printed in any order`, or `the order of the
//!   <output nouns> does not matter` (not `the order of choice does not matter`).
//! * `tolerance`: `absolute or relative error` (either order, also `precision`, `difference`),
//!   `absolute error` / `relative error` with a bound or an epsilon, `within EPS of the correct
//!   answer`, `|a - b| <= EPS`, `tolerance EPS`. The epsilon is the first number below 1 in
//!   the sentence after the phrase (else before it): `10^{-6}`, `10^{ - 6}`, `10^(-6)`, `10^-6`,
//!   `10<sup>-6</sup>`, `10⁻⁶`, `1e-6`, `2 \cdot 10^{-7}`, `0.0001`, and the scraped `10 - 6` /
//!   `10-5` (a lost superscript).
//!
//! Letter case is not a kind: "You can output YES and NO in any case" is left to the verifier
//! (the judge compares words exactly; docs/notes.md).

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Why a statement accepts more than one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VarietyKind {
    /// Several answers are correct and any one is accepted.
    AnyAnswer,
    /// The answer's items may come in any order.
    AnyOrder,
    /// Numbers are accepted within an absolute or relative error.
    Tolerance,
}

impl VarietyKind {
    /// Every kind, in report order.
    pub const ALL: [Self; 3] = [Self::AnyAnswer, Self::AnyOrder, Self::Tolerance];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::AnyAnswer => "any_answer",
            Self::AnyOrder => "any_order",
            Self::Tolerance => "tolerance",
        }
    }
}

/// One phrase that makes a statement accept more than one answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VarietyPhrase {
    /// What kind of freedom it grants.
    pub kind: VarietyKind,
    /// The phrase as matched (white space collapsed, `$` dropped, at most 200 characters).
    pub phrase: String,
    /// For `tolerance`: the error bound the statement states, when it states one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
}

/// Longest phrase reported, in characters.
const PHRASE_CHARACTERS: usize = 200;

/// Statements longer than this many characters are read up to here (a prompt is a few KiB; the cap bounds the
/// work on a pathological one).
const STATEMENT_CHARACTERS: usize = 1 << 20;

fn compile(pattern: &str) -> Option<Regex> {
    // The patterns are constants covered by the tests; `None` only disables a rule.
    Regex::new(pattern).ok()
}

/// A rule's regular expression, compiled on first use.
macro_rules! pattern {
    ($(#[$attribute:meta])* $name:ident, $text:expr) => {
        $(#[$attribute])*
        static $name: LazyLock<Option<Regex>> = LazyLock::new(|| compile($text));
    };
}

/// Nouns an answer is made of, for "several <answers>".
const ANSWER_NOUNS: &str = r"answers?|solutions?|ways?|outputs?|possibilit(?:y|ies)|options?|results?|arrays?|strings?|sequences?|permutations?|pairs?|indices|indexes|arrangements?|routes?|paths?|trees?|graphs?|sets?|orders?|orderings?|configurations?|choices|candidates|matri(?:x|ces)|points?|values?|colou?rings?|partitions?|assignments?|segments?|schedules?|positions?|subsets?|subsequences?|substrings?|cycles?|placements?|tilings?|words?|numbers?|pairs?|triples?|moves?|plans?|splits?|divisions?";

pattern!(
    SEVERAL_ANSWERS,
    &format!(
        r"(?i)\b(?:(?:if|when|in\s+case|should|in\s+case\s+that)\s+(?:there\s+)?(?:(?:are|is|exist|exists|be)\s+)?(?:several|multiple|many|more\s+than\s+one|various)\s+(?:[\w'-]+\s+){{0,3}}?(?:{ANSWER_NOUNS})\b|(?:if|when)\s+(?:the\s+)?(?:answer|solution|result|output)s?\s+(?:is|are)\s+(?:not\s+unique|ambiguous)|(?:if|when)\s+(?:several|multiple|many|more\s+than\s+one)\s+(?:[\w'-]+\s+){{0,3}}?(?:{ANSWER_NOUNS})\s+(?:exist|are\s+possible|is\s+possible|satisfy|fit|work))"
    )
);
pattern!(
    CHOICE,
    r"(?i)\b(?:any|either|arbitrary|whichever)(?:\s+(?:one\s+)?of\s+(?:them|these|those|the\s+\w+))?\b|\bone\s+of\s+(?:them|these|those)\b|\bone\s+such\b"
);
pattern!(
    OUTPUT_ANY,
    r"(?i)\b(?:print|output|return|find|construct|build|display|write|produce|report|restore|generate|show|give)(?:s|ed|ing)?\s+(?:[\w'-]+\s+){0,2}?any\s+(?:one\s+)?(?:of\s+(?:them|these|those|the\s+(?:answers|solutions|possible|valid|optimal|correct|suitable))|(?:valid|correct|possible|suitable|optimal|acceptable|appropriate|such|feasible|good|proper|legal)\b|(?:answer|solution|arrangement|permutation|sequence|array|string|way|route|path|configuration|assignment|matrix|tree|graph|set|pair|triple|colou?ring|partition|schedule|one|subset|subsequence|substring|cycle|placement|tiling|word|split|division|plan)s?\b)"
);
pattern!(
    OUTPUT_ANY_BARE,
    r#"(?i)\b(?:print|output|return|write|display)\s+any\s*(?:[.!;,)"]|$)"#
);
pattern!(
    AND_ANY_VALID,
    r"(?i)\b(?:and|then)\s+any\s+(?:valid|correct|suitable|feasible|acceptable|optimal|possible)\s+\w+"
);
pattern!(
    ANY_ACCEPTED,
    r"(?i)\bany\s+(?:of\s+them|(?:[\w'-]+\s+){0,4}?(?:answers?|solutions?|outputs?))\s+(?:[\w'-]+\s+){0,4}?(?:will|would|shall|is|are|should)\s+(?:be\s+)?(?:accepted|acceptable|considered\s+correct|judged\s+correct|correct)\b"
);
pattern!(SPECIAL_JUDGE, r"(?i)\bspecial\s+(?:judge|checker)\b");

pattern!(
    OUTPUT_IN_ANY_ORDER,
    r"(?i)\b(?P<verb>print|output|return|write|display|report)(?:s|ed|ing|ted)?\s+(?P<gap>(?:[^\s.;:!?]+\s+){0,7}?)in\s+(?:any|an?\s+arbitrary|arbitrary)\s+order\b"
);
pattern!(
    BE_PRINTED_IN_ANY_ORDER,
    r"(?i)\b(?:can|may|could|might|should|are\s+allowed\s+to|is\s+allowed\s+to)\s+be\s+(?:printed|output|outputted|returned|written|displayed|reported)\s+in\s+(?:any|an?\s+arbitrary|arbitrary)\s+order\b"
);
pattern!(
    ORDER_DOES_NOT_MATTER,
    r"(?i)\b(?:the\s+)?order\s+(?P<what>[^.;:!?]{0,60}?)\s*(?:does\s+not|doesn't|do\s+not|don't|is\s+not|isn't|will\s+not|won't)\s+(?:matter|important|significant|relevant)\b"
);
pattern!(
    MATTER_WHICH_ORDER,
    r"(?i)\b(?:does\s+not|doesn't)\s+matter\s+in\s+(?:which|what)\s+order\s+(?:you\s+)?(?:print|output|return|write)"
);
pattern!(
    /// What the `order ... does not matter` clause must be about to count: the output.
    OUTPUT_WORDS,
    r"(?i)\b(?:output|outputs|answer|answers|print|printed|return|returned|results?|pairs|numbers|elements|indices|combinations|permutations|subsets|lines|values|items|strings|words|edges|vertices|triples|tuples|integers|points|coordinates|segments|intervals|sets|lists|names|ids|labels)\b"
);
pattern!(
    INPUT_WORDS,
    r"(?i)\b(?:input|given|choice|choose|chosen|operations|moves|steps)\b"
);
pattern!(
    /// A verb in the gap of `print ... in any order` means the order is not the output's.
    GAP_VERBS,
    r"(?i)\b(?:by|performing|perform|doing|do|apply|applying|using|use|visit|visiting|take|taking|make|making|process|processing|after|when|if|can|could)\b"
);

pattern!(
    ABSOLUTE_OR_RELATIVE,
    r"(?i)\b(?:absolute|relative)\s+(?:or|and|/|and/or|or\s+the)\s+(?:absolute|relative)\s+(?:error|difference|precision|tolerance|accuracy)s?\b"
);
pattern!(
    ONE_SIDED_ERROR,
    r"(?i)\b(?:absolute|relative)\s+(?:error|difference|precision|tolerance|accuracy)\b"
);
pattern!(
    ERROR_BOUND,
    r"(?i)\b(?:error|difference|deviation)\s+(?:of\s+|is\s+|should\s+be\s+|must\s+be\s+|does\s+not\s+|doesn't\s+|not\s+)?(?:at\s+most|not\s+exceeding|exceed|less\s+than|no\s+more\s+than|not\s+more\s+than|up\s+to|within|smaller\s+than|below|not\s+greater\s+than|of\s+at\s+most|≤)"
);
pattern!(
    WITHIN_OF_ANSWER,
    r"(?i)\bwithin\s+(?:an?\s+)?(?:absolute\s+|relative\s+)?(?:error\s+of\s+)?(?P<eps>[^\s]+(?:\s*[-−]\s*\d+)?)\s+(?:of|from)\s+(?:the\s+)?(?:actual|correct|true|exact|expected|right|jury'?s?|judge'?s?|official|reference|optimal|real|precise)\b"
);
pattern!(
    FORMULA,
    r"(?i)\|\s*[a-z]\s*-\s*[a-z]\s*\|[^.;!?]{0,60}?(?:≤|\\le(?:q)?\b|<=|<)"
);
pattern!(
    TOLERANCE_WORD,
    r"(?i)\b(?:tolerance|precision|accuracy)\s+(?:of\s+)?(?:at\s+least\s+|at\s+most\s+|up\s+to\s+)?"
);
pattern!(
    /// Whose error it is: a one-sided bound counts only in a sentence about the answer.
    ANSWER_CONTEXT,
    r"(?i)\b(?:answers?|outputs?|results?|your|printed|print|value|values|solution|judge|jury|checker|accepted|correct)\b"
);
pattern!(
    EPSILON,
    r"(?i)(?P<mantissa>\d+(?:\.\d+)?)\s*(?:\\cdot|\\times|·|×|\*)\s*10\s*\^\s*\{?\s*\(?\s*[-−–]\s*(?P<mantissa_exponent>\d{1,3})\s*\)?\s*\}?|(?P<scientific>\d+(?:\.\d+)?)\s*e\s*[-−]\s*(?P<scientific_exponent>\d{1,3})\b|10\s*\^\s*\{?\s*\(?\s*[-−–]\s*(?P<power>\d{1,3})\s*\)?\s*\}?|10\s*<sup>\s*[-−–]\s*(?P<sup>\d{1,3})\s*</sup>|10\s*\*\*\s*\(?\s*-\s*(?P<python>\d{1,3})\s*\)?|10⁻(?P<superscript>[⁰¹²³⁴⁵⁶⁷⁸⁹]+)|\b(?P<decimal>0\.\d+)\b|\b10\s*[-−–]\s*(?P<scraped>\d{1,2})\b"
);

fn find<'t>(regex: &LazyLock<Option<Regex>>, text: &'t str) -> Option<regex::Match<'t>> {
    regex.as_ref().and_then(|regex| regex.find(text))
}

fn captures<'t>(regex: &LazyLock<Option<Regex>>, text: &'t str) -> Option<Captures<'t>> {
    regex.as_ref().and_then(|regex| regex.captures(text))
}

fn is_match(regex: &LazyLock<Option<Regex>>, text: &str) -> bool {
    regex.as_ref().is_some_and(|regex| regex.is_match(text))
}

/// The sentences of a statement, each with white space collapsed and `$` dropped.
fn sentences(statement: &str) -> Vec<String> {
    let statement = match statement.char_indices().nth(STATEMENT_CHARACTERS) {
        Some((end, _)) => &statement[..end],
        None => statement,
    };
    let mut sentences = Vec::new();
    for paragraph in statement
        .split("\n\n")
        .flat_map(|part| part.split("\r\n\r\n"))
    {
        let mut current = String::new();
        let mut characters = paragraph.chars().peekable();
        while let Some(character) = characters.next() {
            match character {
                '$' => {}
                '’' | '‘' => current.push('\''),
                whitespace if whitespace.is_whitespace() => {
                    if !current.is_empty() && !current.ends_with(' ') {
                        current.push(' ');
                    }
                }
                '.' | '!' | '?' => {
                    current.push(character);
                    let ends = characters.peek().is_none_or(|next| next.is_whitespace());
                    if ends && !abbreviation(&current) {
                        push_sentence(&mut sentences, &mut current);
                    }
                }
                other => current.push(other),
            }
        }
        push_sentence(&mut sentences, &mut current);
    }
    sentences
}

/// `e.g.`, `i.e.`, `etc.`: a full stop that does not end the sentence.
fn abbreviation(sentence: &str) -> bool {
    // Only the tail is looked at: a long run of abbreviations stays linear.
    let tail = sentence.as_bytes();
    let tail = &tail[tail.len().saturating_sub(5)..];
    ["e.g.", "i.e.", "etc.", "vs.", "resp."].iter().any(|word| {
        tail.len() >= word.len()
            && tail[tail.len() - word.len()..].eq_ignore_ascii_case(word.as_bytes())
    })
}

fn push_sentence(sentences: &mut Vec<String>, current: &mut String) {
    let trimmed = current.trim();
    if !trimmed.is_empty() {
        sentences.push(trimmed.to_owned());
    }
    current.clear();
}

fn phrase(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(PHRASE_CHARACTERS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// A kind's rule: the phrase of that kind in one sentence, if any.
type Rule = fn(&str) -> Option<VarietyPhrase>;

const RULES: [(VarietyKind, Rule); 3] = [
    (VarietyKind::AnyAnswer, any_answer),
    (VarietyKind::AnyOrder, any_order),
    (VarietyKind::Tolerance, tolerance),
];

/// The phrases that make `statement` accept more than one answer: at most one per kind (the
/// first in the text), in [`VarietyKind::ALL`] order. Empty when the answer is unique as far
/// as the statement says.
pub fn answer_variety(statement: &str) -> Vec<VarietyPhrase> {
    let mut found: Vec<Option<VarietyPhrase>> = vec![None; VarietyKind::ALL.len()];
    for sentence in sentences(statement) {
        for (kind, check) in RULES {
            let slot = &mut found[kind as usize];
            if slot.is_none() {
                *slot = check(&sentence);
            }
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found.into_iter().flatten().collect()
}

fn any_answer(sentence: &str) -> Option<VarietyPhrase> {
    let found = |text: &str| {
        Some(VarietyPhrase {
            kind: VarietyKind::AnyAnswer,
            phrase: phrase(text),
            epsilon: None,
        })
    };
    if let Some(several) = find(&SEVERAL_ANSWERS, sentence) {
        let rest = &sentence[several.end()..];
        // The choice must follow the clause closely: "..., print any of them".
        let window_end = rest
            .char_indices()
            .nth(120)
            .map_or(rest.len(), |(index, _)| index);
        if let Some(choice) = find(&CHOICE, &rest[..window_end]) {
            return found(&sentence[several.start()..several.end() + choice.end()]);
        }
    }
    for rule in [&OUTPUT_ANY, &OUTPUT_ANY_BARE, &AND_ANY_VALID, &ANY_ACCEPTED] {
        if let Some(matched) = find(rule, sentence) {
            let text = matched
                .as_str()
                .trim_end_matches(['.', '!', ';', ',', ')', '"']);
            return found(text);
        }
    }
    find(&SPECIAL_JUDGE, sentence).and_then(|matched| found(matched.as_str()))
}

fn any_order(sentence: &str) -> Option<VarietyPhrase> {
    let found = |text: &str| {
        Some(VarietyPhrase {
            kind: VarietyKind::AnyOrder,
            phrase: phrase(text),
            epsilon: None,
        })
    };
    if let Some(captured) = captures(&OUTPUT_IN_ANY_ORDER, sentence) {
        let gap = captured.name("gap").map_or("", |gap| gap.as_str());
        if !is_match(&GAP_VERBS, gap)
            && let Some(whole) = captured.get(0)
        {
            return found(whole.as_str());
        }
    }
    if let Some(matched) = find(&BE_PRINTED_IN_ANY_ORDER, sentence) {
        return found(matched.as_str());
    }
    if let Some(captured) = captures(&ORDER_DOES_NOT_MATTER, sentence) {
        let what = captured.name("what").map_or("", |what| what.as_str());
        if is_match(&OUTPUT_WORDS, what)
            && !is_match(&INPUT_WORDS, what)
            && let Some(whole) = captured.get(0)
        {
            return found(whole.as_str());
        }
    }
    find(&MATTER_WHICH_ORDER, sentence).and_then(|matched| found(matched.as_str()))
}

fn tolerance(sentence: &str) -> Option<VarietyPhrase> {
    if let Some(captured) = captures(&WITHIN_OF_ANSWER, sentence)
        && let Some(whole) = captured.get(0)
        && let Some(epsilon) = captured
            .name("eps")
            .and_then(|eps| epsilon_in(eps.as_str()))
    {
        return Some(VarietyPhrase {
            kind: VarietyKind::Tolerance,
            phrase: phrase(whole.as_str()),
            epsilon: Some(epsilon),
        });
    }
    let (start, end, needs_bound) = if let Some(matched) = find(&ABSOLUTE_OR_RELATIVE, sentence) {
        (matched.start(), matched.end(), false)
    } else if let Some(matched) = find(&ONE_SIDED_ERROR, sentence)
        .or_else(|| find(&ERROR_BOUND, sentence))
        .or_else(|| find(&FORMULA, sentence))
        .or_else(|| find(&TOLERANCE_WORD, sentence))
    {
        (matched.start(), matched.end(), true)
    } else {
        return None;
    };
    let after = epsilon_at(sentence, end);
    let epsilon = after
        .map(|(value, _)| value)
        .or_else(|| epsilon_in(&sentence[..start]));
    // A one-sided or formula phrase counts only with a stated bound, in a sentence about the
    // answer: "the error in the measurements is at most 5 millimetres" is a story, not a
    // checker.
    if needs_bound && (epsilon.is_none() || !is_match(&ANSWER_CONTEXT, sentence)) {
        return None;
    }
    let phrase_end = after.map_or(end, |(_, epsilon_end)| epsilon_end);
    Some(VarietyPhrase {
        kind: VarietyKind::Tolerance,
        phrase: phrase(&sentence[start..phrase_end]),
        epsilon,
    })
}

/// The first epsilon in `text`.
fn epsilon_in(text: &str) -> Option<f64> {
    epsilon_at(text, 0).map(|(value, _)| value)
}

/// The first epsilon in `text` at or after byte `from`, and where it ends.
fn epsilon_at(text: &str, from: usize) -> Option<(f64, usize)> {
    let regex = EPSILON.as_ref()?;
    regex.captures_at(text, from).and_then(|captured| {
        let value = epsilon_value(&captured)?;
        let end = captured.get(0)?.end();
        (value > 0.0 && value < 1.0).then_some((value, end))
    })
}

fn epsilon_value(captured: &Captures<'_>) -> Option<f64> {
    let number = |name: &str| captured.name(name).map(|found| found.as_str());
    let power = |exponent: &str| -> Option<f64> {
        let exponent: i32 = exponent.parse().ok()?;
        Some(10f64.powi(-exponent))
    };
    if let (Some(mantissa), Some(exponent)) = (number("mantissa"), number("mantissa_exponent")) {
        return Some(mantissa.parse::<f64>().ok()? * power(exponent)?);
    }
    if let (Some(mantissa), Some(exponent)) = (number("scientific"), number("scientific_exponent"))
    {
        return format!("{mantissa}e-{exponent}").parse().ok();
    }
    for name in ["power", "sup", "python", "scraped"] {
        if let Some(exponent) = number(name) {
            return power(exponent);
        }
    }
    if let Some(superscript) = number("superscript") {
        let digits: String = superscript
            .chars()
            .filter_map(|digit| "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|known| known == digit))
            .map(|digit| char::from(b'0' + digit as u8))
            .collect();
        return power(&digits);
    }
    number("decimal").and_then(|decimal| decimal.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(statement: &str) -> Vec<&'static str> {
        answer_variety(statement)
            .iter()
            .map(|found| found.kind.name())
            .collect()
    }

    #[test]
    fn sentences_split_at_full_stops_and_blank_lines_only() {
        assert_eq!(
            sentences("Print  $x$.\nIf there are\nmany, e.g. two, print 1.5 or\n\nOutput it!"),
            [
                "Print x.",
                "If there are many, e.g. two, print 1.5 or",
                "Output it!"
            ]
        );
    }

    #[test]
    fn epsilons_in_every_notation() {
        for (text, value) in [
            ("10^{-6}", 1e-6),
            ("10^{ - 6}", 1e-6),
            ("10^(-6)", 1e-6),
            ("10^-9", 1e-9),
            ("10^{−6}", 1e-6),
            ("10<sup>-7</sup>", 1e-7),
            ("10⁻⁶", 1e-6),
            ("1e-6", 1e-6),
            ("1E-9", 1e-9),
            ("2.5e-7", 2.5e-7),
            ("2 \\cdot 10^{-7}", 2e-7),
            ("0.0001", 1e-4),
            ("10 - 6", 1e-6),
            ("10-5", 1e-5),
            ("10**-6", 1e-6),
        ] {
            let found = epsilon_in(text).unwrap_or(f64::NAN);
            assert!(
                (found - value).abs() <= value * 1e-12,
                "{text}: {found} != {value}"
            );
        }
        for text in ["10^9+7", "10^{18}", "1 \\le n \\le 10^5", "5", "2.5", "1e6"] {
            assert_eq!(epsilon_in(text), None, "{text}");
        }
    }

    #[test]
    fn the_phrase_and_epsilon_are_reported() {
        let found = answer_variety(
            "Print the time. Your answer will be considered correct if its absolute or relative error does not exceed $10^{-6}$.",
        );
        assert_eq!(
            found,
            [VarietyPhrase {
                kind: VarietyKind::Tolerance,
                phrase: "absolute or relative error does not exceed 10^{-6}".to_owned(),
                epsilon: Some(1e-6),
            }]
        );
        let found = answer_variety("If there are multiple answers, print any of them.");
        assert_eq!(
            found[0].phrase,
            "If there are multiple answers, print any of them"
        );
    }

    #[test]
    fn several_answers_without_a_choice_is_unique() {
        assert!(
            kinds("If there are multiple answers, print the lexicographically smallest one.")
                .is_empty()
        );
        assert!(
            kinds("If there are multiple test cases, print each answer on its own line.")
                .is_empty()
        );
        assert_eq!(
            kinds("If there are multiple answers with the same cost, print any of them."),
            ["any_answer"]
        );
    }

    #[test]
    fn case_freedom_and_input_order_are_not_flagged() {
        assert!(kinds("You can output YES and NO in any case.").is_empty());
        assert!(kinds("The edges are given in arbitrary order.").is_empty());
        assert!(
            kinds(
                "Return the maximum score you can get by performing the operations in any order."
            )
            .is_empty()
        );
        assert!(kinds("The order of choice does not matter.").is_empty());
        assert_eq!(
            kinds("You may return the answer in any order."),
            ["any_order"]
        );
    }

    #[test]
    fn abbreviations_do_not_end_sentences() {
        assert_eq!(
            sentences("Print, E.G. two. Next"),
            ["Print, E.G. two.", "Next"]
        );
        assert_eq!(sentences("a etc. b"), ["a etc. b"]);
    }

    #[test]
    fn a_huge_statement_is_read_up_to_the_cap() {
        let mut statement = "word ".repeat(STATEMENT_CHARACTERS);
        statement.push_str("Print any of them.");
        assert!(answer_variety(&statement).is_empty());
        assert!(answer_variety("").is_empty());
        // A run of abbreviations is one long sentence, read in linear time.
        let abbreviations = "e.g. ".repeat(200_000) + "print any of them.";
        assert_eq!(answer_variety(&abbreviations).len(), 1);
    }
}
