//! Full-text matching: the words of a text as a full-text index keeps them.
//!
//! A text is split into words at every character that is neither a letter
//! nor a digit, each word is lower-cased and reduced to its stem by the
//! Snowball stemmer of the path's language (the full-text policy's), so
//! that "Running" and "runs" are one word, "run". A search term is analysed
//! the same way; a term of several words ("United States") is a phrase: it
//! occurs where its words follow one another. Stop words are kept.
//!
//! Stemming is most of a full-text query's time, and texts repeat their
//! words: each thread remembers the stems it computed, per language (a
//! stem depends only on the word), up to [`REMEMBERED_STEMS`] words.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;

use crate::data::index::search_policy::LANGUAGES;

/// The Snowball stemmer of a full-text policy language, by its language
/// subtag (pt-BR and pt-PT share Portuguese's).
fn algorithm(code: &str) -> Algorithm {
    match code.split('-').next().unwrap_or_default() {
        "fr" => Algorithm::French,
        "de" => Algorithm::German,
        "it" => Algorithm::Italian,
        "pt" => Algorithm::Portuguese,
        "es" => Algorithm::Spanish,
        _ => Algorithm::English,
    }
}

/// Turns texts into stemmed words for one language.
pub struct Analyzer {
    stemmer: Stemmer,
    /// Its place in [`LANGUAGES`], which names its stem cache.
    language: usize,
}

/// Stems remembered per thread and language before the cache starts over.
pub const REMEMBERED_STEMS: usize = 65_536;

thread_local! {
    /// Per language: lower-cased word → stem.
    static STEMS: RefCell<Vec<HashMap<String, String, foldhash::fast::RandomState>>> =
        RefCell::new((0..LANGUAGES.len()).map(|_| HashMap::default()).collect());
}

/// The analyzer of `language` (a policy's code, any case); English for
/// one this engine does not know (the policy refuses those).
pub fn analyzer(language: &str) -> &'static Analyzer {
    static ANALYZERS: OnceLock<Vec<Analyzer>> = OnceLock::new();
    let analyzers = ANALYZERS.get_or_init(|| {
        LANGUAGES
            .iter()
            .enumerate()
            .map(|(language, code)| Analyzer {
                stemmer: Stemmer::create(algorithm(code)),
                language,
            })
            .collect()
    });
    let index = LANGUAGES
        .iter()
        .position(|code| code.eq_ignore_ascii_case(language))
        .unwrap_or(0);
    &analyzers[index]
}

impl Analyzer {
    /// The words of `text`, in order.
    pub fn words(&self, text: &str) -> Vec<String> {
        STEMS.with(|stems| {
            let stems = &mut stems.borrow_mut()[self.language];
            let mut lower = String::new();
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| {
                    if w.is_ascii() {
                        lower.clear();
                        lower.push_str(w);
                        lower.make_ascii_lowercase();
                    } else {
                        // The whole word at once: a final sigma lowers to ς.
                        lower = w.to_lowercase();
                    }
                    if let Some(stem) = stems.get(lower.as_str()) {
                        return stem.clone();
                    }
                    let stem = self.stemmer.stem(&lower).into_owned();
                    if stems.len() >= REMEMBERED_STEMS {
                        stems.clear();
                    }
                    stems.insert(lower.clone(), stem.clone());
                    stem
                })
                .collect()
        })
    }

    /// The words of a document's value: a string, or the strings of an
    /// array (each its own run of words: a phrase does not span two);
    /// `None` for anything else, which full-text functions leave undefined.
    pub fn document(&self, value: &Value) -> Option<Vec<Vec<String>>> {
        match value {
            Value::String(text) => Some(vec![self.words(text)]),
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|text| self.words(text))
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// How many times `phrase` (analysed words) occurs in `runs`.
pub fn occurrences(runs: &[Vec<String>], phrase: &[String]) -> u64 {
    if phrase.is_empty() {
        return 0;
    }
    runs.iter()
        .map(|run| {
            run.windows(phrase.len())
                .filter(|window| *window == phrase)
                .count() as u64
        })
        .sum()
}

/// The number of words of a document's value.
pub fn word_count(runs: &[Vec<String>]) -> u64 {
    runs.iter().map(|run| run.len() as u64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(text: &str) -> Vec<String> {
        analyzer("en-US").words(text)
    }

    #[test]
    fn english_words_are_lower_cased_and_stemmed() {
        assert_eq!(
            words("The United States' runners were RUNNING."),
            ["the", "unit", "state", "runner", "were", "run"]
        );
        // A stem is not a prefix: "Johnson" is not "John".
        assert_eq!(words("John Johnson"), ["john", "johnson"]);
        assert!(words("  ,;  ").is_empty());
    }

    #[test]
    fn phrases_count_where_their_words_follow_one_another() {
        let analyzer = analyzer("en-US");
        let doc = analyzer
            .document(&json!("united states, the States united; United States"))
            .unwrap();
        assert_eq!(occurrences(&doc, &words("United States")), 2);
        assert_eq!(occurrences(&doc, &words("state")), 3);
        assert_eq!(occurrences(&doc, &words("")), 0);
        assert_eq!(word_count(&doc), 7);
        // Array elements are separate runs: no phrase across two.
        let doc = analyzer.document(&json!(["united", "states", 3])).unwrap();
        assert_eq!(occurrences(&doc, &words("united states")), 0);
        assert_eq!(word_count(&doc), 2);
        assert_eq!(analyzer.document(&json!(7)), None);
    }

    #[test]
    fn each_policy_language_has_its_stemmer() {
        assert_eq!(analyzer("de-DE").words("Beispiele"), ["beispiel"]);
        assert_eq!(analyzer("es-es").words("demostraciones"), ["demostr"]);
        assert_eq!(analyzer("fr-FR").words("démonstrations"), ["démonstr"]);
        // Unknown: English.
        assert_eq!(analyzer("xx-XX").words("runs"), ["run"]);
    }

    #[test]
    fn remembered_stems_are_the_stemmer_s_whatever_the_case_or_cache() {
        let english = analyzer("en-US");
        let stemmer = Stemmer::create(Algorithm::English);
        let text = "Running RUNS runner ΣΊΣΥΦΟΣ Straße running";
        let fresh: Vec<String> = text
            .split(' ')
            .map(|w| stemmer.stem(&w.to_lowercase()).into_owned())
            .collect();
        // Once computing, once remembering; a French word of the same
        // spelling keeps its own stem.
        assert_eq!(english.words(text), fresh);
        assert_eq!(english.words(text), fresh);
        assert_eq!(analyzer("fr-FR").words("running"), ["running"]);
        assert_eq!(english.words("running"), ["run"]);
        // Past the bound the cache starts over and stays right.
        for n in 0..REMEMBERED_STEMS + 10 {
            english.words(&format!("w{n}ing"));
        }
        assert_eq!(english.words("Runners"), ["runner"]);
    }
}
