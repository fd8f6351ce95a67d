//! Which language the judge scores a response in (issue 24), and which block is the code.
//!
//! The judge reads the closed fenced blocks after the last `</think>` (docs/profiles.md).
//! * A job that names its `language` gets the last block tagged with that language (`cpp`,
//!   `c++`, `cc`, `java`, `js`, `rust`, `rs`, ...), else the last untagged block, taken to be
//!   in that language.
//! * A job without one gets the last block whose tag names a language the job allows (every
//!   language unless it pins `languages`); an untagged block is Python, as it always was.
//!
//! The reference profiles are Python-only, as their references are: they ignore both keys.

use rlvr_language::{Language, LanguageChoice};

use crate::extraction::{FencedBlock, judge_blocks};
use rlvr_python_compat::text::python_strip;

/// A job's language settings (its `language` and `languages` keys).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LanguageRequest {
    /// The language the job asks for, when it names one.
    pub requested: Option<LanguageChoice>,
    /// The languages the job allows; `None` is every language.
    pub allowed: Option<Vec<Language>>,
}

impl LanguageRequest {
    fn allows(&self, language: Language) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|allowed| allowed.contains(&language))
    }
}

/// The code the judge scores and its language, or `None` when the response has no block the
/// job accepts.
pub fn select_code(response: &str, request: &LanguageRequest) -> Option<(String, LanguageChoice)> {
    let blocks = judge_blocks(response);
    let chosen = match request.requested {
        Some(requested) => last_of(&blocks, |block| {
            Language::from_fence_tag(&block.info)
                .filter(|choice| choice.language == requested.language)
                .map(|_| requested)
        })
        .or_else(|| {
            last_of(&blocks, |block| {
                block
                    .info
                    .split_whitespace()
                    .next()
                    .is_none()
                    .then_some(requested)
            })
        }),
        None => last_of(&blocks, |block| {
            let choice = if block.info.split_whitespace().next().is_none() {
                Some(LanguageChoice::from(Language::Python))
            } else {
                Language::from_fence_tag(&block.info)
            };
            choice.filter(|choice| request.allows(choice.language))
        }),
    }?;
    let (code, choice) = chosen;
    let empty = if choice.language == Language::Python {
        python_strip(&code).is_empty()
    } else {
        code.trim().is_empty()
    };
    (!empty).then_some((code, choice))
}

fn last_of(
    blocks: &[FencedBlock],
    accept: impl Fn(&FencedBlock) -> Option<LanguageChoice>,
) -> Option<(String, LanguageChoice)> {
    blocks
        .iter()
        .rev()
        .find_map(|block| accept(block).map(|choice| (block.code.clone(), choice)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn language_of(response: &str, request: &LanguageRequest) -> Option<(String, Language)> {
        select_code(response, request).map(|(code, choice)| (code, choice.language))
    }

    #[test]
    fn the_fence_names_the_language_and_the_last_block_wins() {
        let response = "```python\nprint(1)\n```\n```cpp\nint main(){}\n```";
        assert_eq!(
            language_of(response, &LanguageRequest::default()),
            Some(("int main(){}".to_owned(), Language::Cpp))
        );
        let response = "```cpp\nint main(){}\n```\n```\nprint(2)\n```";
        assert_eq!(
            language_of(response, &LanguageRequest::default()),
            Some(("print(2)".to_owned(), Language::Python))
        );
    }

    #[test]
    fn a_requested_language_takes_its_last_block_then_an_untagged_one() {
        let request = LanguageRequest {
            requested: Language::from_name("java"),
            allowed: None,
        };
        let response = "```java\nclass A{}\n```\n```python\nprint(1)\n```\n```java\nclass B{}\n```\n```py\nx\n```";
        assert_eq!(
            language_of(response, &request),
            Some(("class B{}".to_owned(), Language::Java))
        );
        let untagged = "```python\nprint(1)\n```\n```\nclass C{}\n```";
        assert_eq!(
            language_of(untagged, &request),
            Some(("class C{}".to_owned(), Language::Java))
        );
        assert_eq!(language_of("```python\nprint(1)\n```", &request), None);
    }

    #[test]
    fn pinned_languages_skip_other_blocks() {
        let request = LanguageRequest {
            requested: None,
            allowed: Some(vec![Language::Python]),
        };
        let response =
            "```python\nprint(1)\n```\n```cpp\nint main(){}\n```\n```kotlin\nfun main(){}\n```";
        assert_eq!(
            language_of(response, &request),
            Some(("print(1)".to_owned(), Language::Python))
        );
    }

    #[test]
    fn a_cpp20_request_keeps_its_standard() {
        let request = LanguageRequest {
            requested: Language::from_name("cpp20"),
            allowed: None,
        };
        let (_, choice) = select_code("```c++\nint main(){}\n```", &request).expect("code");
        assert_eq!(choice.cpp_standard, rlvr_language::CppStandard::Cpp20);
    }

    #[test]
    fn thinking_is_not_the_answer_and_empty_blocks_are_no_code() {
        let response = "<think>```cpp\nint main(){}\n```</think>\nno code here";
        assert_eq!(language_of(response, &LanguageRequest::default()), None);
        assert_eq!(
            language_of("```go\n  \n```", &LanguageRequest::default()),
            None
        );
    }
}
