//! A small PromQL evaluator for the queries of the Grafana dashboard (`deploy/grafana`), so a
//! test can render each panel from two scrapes of a real server: numbers, instant selectors
//! (`name{label="value"}`, `=` and `!=`), `rate(selector[range])` over the pair of scrapes
//! (the range is the time between them; a series absent from the first counts from 0: it was
//! created in between), `sum`, `max` and `min` with an optional `by (labels)`, and
//! `histogram_quantile(q, vector)` interpolated inside the bucket as Prometheus does. Anything
//! else is a parse error, so a dashboard query this cannot read fails the test rather than
//! being skipped.

use std::collections::BTreeMap;

/// The labels of one series.
pub type Labels = BTreeMap<String, String>;

/// One line of the text exposition: a series and its value.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: Labels,
    pub value: f64,
}

/// One scrape of `/metrics`.
#[derive(Debug, Clone)]
pub struct Scrape {
    pub samples: Vec<Sample>,
}

impl Scrape {
    /// Parses the Prometheus text format (comments skipped; label values without escapes, as
    /// rlvr writes them).
    pub fn parse(text: &str) -> Self {
        let samples = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
            .map(|line| {
                let (series, value) = line
                    .rsplit_once(' ')
                    .unwrap_or_else(|| panic!("a sample line, got {line:?}"));
                let value = value
                    .parse()
                    .unwrap_or_else(|_| panic!("a number in {line:?}"));
                let (name, labels) = match series.split_once('{') {
                    None => (series.to_owned(), Labels::new()),
                    Some((name, rest)) => {
                        let inside = rest.strip_suffix('}').expect("labels end with }");
                        let labels = inside
                            .split("\",")
                            .filter(|pair| !pair.is_empty())
                            .map(|pair| {
                                let (key, value) = pair.split_once("=\"").expect("key=\"value\"");
                                (key.to_owned(), value.trim_end_matches('"').to_owned())
                            })
                            .collect();
                        (name.to_owned(), labels)
                    }
                };
                Sample {
                    name,
                    labels,
                    value,
                }
            })
            .collect();
        Self { samples }
    }

    /// Whether any series has this name.
    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|sample| sample.name == name)
    }
}

/// Two scrapes and the seconds between them: what `rate` reads.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    pub before: &'a Scrape,
    pub after: &'a Scrape,
    pub seconds: f64,
}

/// A query's result: series and their values.
pub type Vector = Vec<(Labels, f64)>;

/// A label matcher: `label="value"` or `label!="value"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Matcher {
    label: String,
    value: String,
    equal: bool,
}

/// A series selector.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    name: String,
    matchers: Vec<Matcher>,
}

impl Selector {
    fn matches(&self, sample: &Sample) -> bool {
        sample.name == self.name
            && self.matchers.iter().all(|matcher| {
                let value = sample.labels.get(&matcher.label).map_or("", String::as_str);
                (value == matcher.value) == matcher.equal
            })
    }
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Number(f64),
    Instant(Selector),
    Rate(Selector),
    Aggregate {
        operation: Aggregation,
        by: Option<Vec<String>>,
        inner: Box<Expr>,
    },
    Quantile {
        quantile: f64,
        inner: Box<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    Sum,
    Max,
    Min,
}

impl Expr {
    /// The metric names the query reads.
    pub fn metric_names(&self) -> Vec<String> {
        match self {
            Self::Number(_) => Vec::new(),
            Self::Instant(selector) | Self::Rate(selector) => vec![selector.name.clone()],
            Self::Aggregate { inner, .. } | Self::Quantile { inner, .. } => inner.metric_names(),
        }
    }

    /// The query's value over `window` (instant selectors read its second scrape).
    pub fn evaluate(&self, window: Window<'_>) -> Vector {
        match self {
            Self::Number(value) => vec![(Labels::new(), *value)],
            Self::Instant(selector) => window
                .after
                .samples
                .iter()
                .filter(|sample| selector.matches(sample))
                .map(|sample| (sample.labels.clone(), sample.value))
                .collect(),
            Self::Rate(selector) => window
                .after
                .samples
                .iter()
                .filter(|sample| selector.matches(sample))
                .map(|sample| {
                    let before = window
                        .before
                        .samples
                        .iter()
                        .find(|old| old.name == sample.name && old.labels == sample.labels)
                        .map_or(0.0, |old| old.value);
                    (
                        sample.labels.clone(),
                        (sample.value - before) / window.seconds,
                    )
                })
                .collect(),
            Self::Aggregate {
                operation,
                by,
                inner,
            } => aggregate(*operation, by.as_deref(), inner.evaluate(window)),
            Self::Quantile { quantile, inner } => {
                histogram_quantile(*quantile, inner.evaluate(window))
            }
        }
    }
}

fn aggregate(operation: Aggregation, by: Option<&[String]>, vector: Vector) -> Vector {
    let mut groups: BTreeMap<Labels, f64> = BTreeMap::new();
    for (labels, value) in vector {
        let key: Labels = labels
            .into_iter()
            .filter(|(label, _)| by.is_some_and(|by| by.contains(label)))
            .collect();
        groups
            .entry(key)
            .and_modify(|total| {
                *total = match operation {
                    Aggregation::Sum => *total + value,
                    Aggregation::Max => total.max(value),
                    Aggregation::Min => total.min(value),
                }
            })
            .or_insert(value);
    }
    groups.into_iter().collect()
}

/// Prometheus's `histogram_quantile`: per group of the other labels, the buckets sorted by
/// `le`, the rank `quantile * total` found by linear interpolation inside its bucket (the
/// first bucket starts at 0; a rank in `+Inf` gives the last finite bound; no observations
/// give NaN).
fn histogram_quantile(quantile: f64, vector: Vector) -> Vector {
    let mut groups: BTreeMap<Labels, Vec<(f64, f64)>> = BTreeMap::new();
    for (mut labels, value) in vector {
        let bound = labels.remove("le").expect("histogram_quantile needs le");
        let bound = if bound == "+Inf" {
            f64::INFINITY
        } else {
            bound.parse().expect("a numeric le")
        };
        groups.entry(labels).or_default().push((bound, value));
    }
    groups
        .into_iter()
        .map(|(labels, mut buckets)| {
            buckets.sort_by(|left, right| left.0.total_cmp(&right.0));
            let total = buckets.last().map_or(0.0, |bucket| bucket.1);
            if total <= 0.0 {
                return (labels, f64::NAN);
            }
            let rank = quantile * total;
            let (mut lower, mut below) = (0.0, 0.0);
            for (bound, count) in &buckets {
                if *count >= rank {
                    if bound.is_infinite() {
                        return (labels, lower);
                    }
                    let share = if *count > below {
                        (rank - below) / (count - below)
                    } else {
                        0.0
                    };
                    return (labels, lower + (bound - lower) * share);
                }
                (lower, below) = (*bound, *count);
            }
            (labels, lower)
        })
        .collect()
}

/// Parses one query of the supported subset, or says what it could not read.
pub fn parse(query: &str) -> Result<Expr, String> {
    let mut parser = Parser {
        tokens: tokenize(query)?,
        position: 0,
    };
    let expr = parser.expr()?;
    match parser.tokens.get(parser.position) {
        None => Ok(expr),
        Some(token) => Err(format!("unexpected {token:?} after the query in {query:?}")),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Number(f64),
    Text(String),
    Range(String),
    Punctuation(&'static str),
}

fn tokenize(query: &str) -> Result<Vec<Token>, String> {
    let characters: Vec<char> = query.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        let rest: String = characters[index..].iter().take(2).collect();
        if character.is_whitespace() {
            index += 1;
        } else if character.is_ascii_alphabetic() || character == '_' || character == ':' {
            let start = index;
            while index < characters.len()
                && (characters[index].is_ascii_alphanumeric()
                    || characters[index] == '_'
                    || characters[index] == ':')
            {
                index += 1;
            }
            tokens.push(Token::Name(characters[start..index].iter().collect()));
        } else if character.is_ascii_digit() || character == '.' {
            let start = index;
            while index < characters.len()
                && (characters[index].is_ascii_digit() || characters[index] == '.')
            {
                index += 1;
            }
            let text: String = characters[start..index].iter().collect();
            tokens.push(Token::Number(
                text.parse().map_err(|_| format!("bad number {text:?}"))?,
            ));
        } else if character == '"' {
            let end = characters[index + 1..]
                .iter()
                .position(|&other| other == '"')
                .ok_or("an unterminated string")?;
            tokens.push(Token::Text(
                characters[index + 1..index + 1 + end].iter().collect(),
            ));
            index += end + 2;
        } else if character == '[' {
            let end = characters[index..]
                .iter()
                .position(|&other| other == ']')
                .ok_or("an unterminated range")?;
            tokens.push(Token::Range(
                characters[index + 1..index + end].iter().collect(),
            ));
            index += end + 1;
        } else if rest == "!=" {
            tokens.push(Token::Punctuation("!="));
            index += 2;
        } else {
            let punctuation = ["(", ")", "{", "}", ",", "="]
                .into_iter()
                .find(|text| text.starts_with(character))
                .ok_or_else(|| format!("unsupported {character:?} in {query:?}"))?;
            tokens.push(Token::Punctuation(punctuation));
            index += 1;
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    position: usize,
}

impl Parser {
    fn next(&mut self) -> Result<Token, String> {
        let token = self
            .tokens
            .get(self.position)
            .cloned()
            .ok_or("the query ends too early")?;
        self.position += 1;
        Ok(token)
    }

    fn expect(&mut self, punctuation: &'static str) -> Result<(), String> {
        match self.next()? {
            Token::Punctuation(found) if found == punctuation => Ok(()),
            other => Err(format!("expected {punctuation:?}, found {other:?}")),
        }
    }

    fn peek_is(&self, punctuation: &'static str) -> bool {
        self.tokens.get(self.position) == Some(&Token::Punctuation(punctuation))
    }

    fn expr(&mut self) -> Result<Expr, String> {
        match self.next()? {
            Token::Number(value) => Ok(Expr::Number(value)),
            Token::Name(name) => match name.as_str() {
                "sum" | "max" | "min" => {
                    let operation = match name.as_str() {
                        "sum" => Aggregation::Sum,
                        "max" => Aggregation::Max,
                        _ => Aggregation::Min,
                    };
                    let by = if self.tokens.get(self.position) == Some(&Token::Name("by".into())) {
                        self.position += 1;
                        Some(self.label_list()?)
                    } else {
                        None
                    };
                    self.expect("(")?;
                    let inner = Box::new(self.expr()?);
                    self.expect(")")?;
                    Ok(Expr::Aggregate {
                        operation,
                        by,
                        inner,
                    })
                }
                "rate" => {
                    self.expect("(")?;
                    let Token::Name(metric) = self.next()? else {
                        return Err("rate takes a selector".into());
                    };
                    let selector = self.selector(metric)?;
                    let Token::Range(_) = self.next()? else {
                        return Err("rate takes a range".into());
                    };
                    self.expect(")")?;
                    Ok(Expr::Rate(selector))
                }
                "histogram_quantile" => {
                    self.expect("(")?;
                    let Token::Number(quantile) = self.next()? else {
                        return Err("histogram_quantile takes a number first".into());
                    };
                    self.expect(",")?;
                    let inner = Box::new(self.expr()?);
                    self.expect(")")?;
                    Ok(Expr::Quantile { quantile, inner })
                }
                _ => Ok(Expr::Instant(self.selector(name)?)),
            },
            other => Err(format!("unexpected {other:?}")),
        }
    }

    fn label_list(&mut self) -> Result<Vec<String>, String> {
        self.expect("(")?;
        let mut labels = Vec::new();
        loop {
            match self.next()? {
                Token::Name(label) => labels.push(label),
                other => return Err(format!("expected a label, found {other:?}")),
            }
            match self.next()? {
                Token::Punctuation(",") => {}
                Token::Punctuation(")") => return Ok(labels),
                other => return Err(format!("expected , or ), found {other:?}")),
            }
        }
    }

    fn selector(&mut self, name: String) -> Result<Selector, String> {
        let mut matchers = Vec::new();
        if self.peek_is("{") {
            self.position += 1;
            while !self.peek_is("}") {
                let Token::Name(label) = self.next()? else {
                    return Err("expected a label name".into());
                };
                let equal = match self.next()? {
                    Token::Punctuation("=") => true,
                    Token::Punctuation("!=") => false,
                    other => return Err(format!("unsupported matcher {other:?}")),
                };
                let Token::Text(value) = self.next()? else {
                    return Err("expected a quoted label value".into());
                };
                matchers.push(Matcher {
                    label,
                    value,
                    equal,
                });
                if self.peek_is(",") {
                    self.position += 1;
                }
            }
            self.position += 1;
        }
        Ok(Selector { name, matchers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# TYPE x counter\nx_total{kind=\"a\"} 4\nx_total{kind=\"b\"} 6\n\
        h_bucket{le=\"1\"} 2\nh_bucket{le=\"2\"} 4\nh_bucket{le=\"+Inf\"} 4\n";

    #[test]
    fn sums_rates_and_quantiles_follow_prometheus() {
        let before = Scrape::parse("x_total{kind=\"a\"} 2\n");
        let after = Scrape::parse(TEXT);
        let window = Window {
            before: &before,
            after: &after,
            seconds: 2.0,
        };
        let by_kind = parse("sum by (kind) (rate(x_total[$__rate_interval]))").unwrap();
        let values: Vec<f64> = by_kind
            .evaluate(window)
            .into_iter()
            .map(|(_, value)| value)
            .collect();
        assert_eq!(values, [1.0, 3.0]);
        let median = parse("histogram_quantile(0.5, sum by (le) (h_bucket))").unwrap();
        assert_eq!(median.evaluate(window)[0].1, 1.0);
        let upper = parse("histogram_quantile(0.75, sum by (le) (h_bucket))").unwrap();
        assert_eq!(upper.evaluate(window)[0].1, 1.5);
        assert_eq!(by_kind.metric_names(), ["x_total"]);
        let filtered = parse("sum(x_total{kind!=\"a\"})").unwrap();
        assert_eq!(filtered.evaluate(window)[0].1, 6.0);
        assert!(parse("x_total / 2").is_err());
        assert!(parse("avg(x_total)").is_err());
    }
}
