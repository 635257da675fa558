//! `RegexMatch`: whether a string contains a match of a regular
//! expression, with the modifiers `i` (ignore case), `m` (multi-line),
//! `s` (`.` matches a newline) and `x` (ignore whitespace and comments).
//!
//! The service uses PCRE; this uses the `regex` crate, which guarantees
//! matching in time linear in the input (no catastrophic backtracking on
//! an item's text). Patterns the crate does not support (look-around,
//! back-references), invalid patterns and unknown modifiers give undefined.
//! Compiled patterns are kept per thread, since a query applies the same
//! pattern to every item.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::{string, Args, Function};

pub const FUNCTIONS: &[(&str, Function)] = &[("REGEXMATCH", regex_match)];

/// Bounds on one compiled pattern's memory (a pattern is query text).
const MAX_COMPILED_BYTES: usize = 4 * 1024 * 1024;
/// Patterns kept per thread before the cache starts afresh.
const MAX_CACHED: usize = 64;

thread_local! {
    static CACHE: RefCell<HashMap<(String, String), Option<Regex>>> =
        RefCell::new(HashMap::new());
}

fn regex_match(args: &Args) -> Option<Value> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let text = string(args, 0)?;
    let pattern = string(args, 1)?;
    let modifiers = if args.len() == 3 {
        string(args, 2)?
    } else {
        ""
    };
    let regex = compiled(pattern, modifiers)?;
    Some(Value::Bool(regex.is_match(text)))
}

fn compiled(pattern: &str, modifiers: &str) -> Option<Regex> {
    let key = (pattern.to_owned(), modifiers.to_owned());
    if let Some(hit) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return hit;
    }
    let regex = build(pattern, modifiers);
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(key, regex.clone());
    });
    regex
}

fn build(pattern: &str, modifiers: &str) -> Option<Regex> {
    let mut builder = RegexBuilder::new(pattern);
    builder
        .size_limit(MAX_COMPILED_BYTES)
        .dfa_size_limit(MAX_COMPILED_BYTES)
        .nest_limit(crate::protocol::limits::MAX_QUERY_NESTING as u32);
    for modifier in modifiers.chars() {
        match modifier {
            'i' => builder.case_insensitive(true),
            'm' => builder.multi_line(true),
            's' => builder.dot_matches_new_line(true),
            'x' => builder.ignore_whitespace(true),
            _ => return None,
        };
    }
    builder.build().ok()
}

#[cfg(test)]
mod tests {
    use super::super::testing::{run, U};
    use rstest::rstest;
    use serde_json::{json, Value};

    #[rstest]
    // https://learn.microsoft.com/en-us/cosmos-db/query/regexmatch
    #[case(json!(["abcd", "ABC"]), Some(false))]
    #[case(json!(["abcd", "ABC", "i"]), Some(true))]
    #[case(json!(["abcd", "ab.", ""]), Some(true))]
    #[case(json!(["abcd", "ab c", "x"]), Some(true))]
    #[case(json!(["abcd", "aB c", "ix"]), Some(true))]
    #[case(json!(["03a", "[0-9]"]), Some(true))]
    #[case(json!(["salt3824908", "salt{1}"]), Some(true))]
    #[case(json!(["shame", "s....", "i"]), Some(true))]
    // Edge rows: the m and s modifiers, anchors, unicode, what is refused.
    #[case(json!(["a\nb", "^b$"]), Some(false))]
    #[case(json!(["a\nb", "^b$", "m"]), Some(true))]
    #[case(json!(["a\nb", "a.b"]), Some(false))]
    #[case(json!(["a\nb", "a.b", "s"]), Some(true))]
    #[case(json!(["Ärger", "^ä", "i"]), Some(true))]
    #[case(json!(["abc", "("]), None)]
    #[case(json!(["abc", "(?=a)"]), None)]
    #[case(json!(["abc", "a", "g"]), None)]
    #[case(json!(["abc", "a", 1]), None)]
    #[case(json!([1, "1"]), None)]
    #[case(json!(["abc", U]), None)]
    #[case(json!(["abc"]), None)]
    #[case(json!(["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "(a+)+$"]), Some(false))]
    fn regex_match(#[case] args: Value, #[case] expected: Option<bool>) {
        assert_eq!(run("REGEXMATCH", args), expected.map(Value::Bool));
    }

    #[test]
    fn a_huge_pattern_is_undefined_not_a_panic() {
        let pattern = "(a{1000}){1000}";
        assert_eq!(run("REGEXMATCH", json!(["a", pattern])), None);
    }
}
