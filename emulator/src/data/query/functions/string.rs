//! String functions: `CONCAT`, `CONTAINS`, `ENDSWITH`, `STARTSWITH`,
//! `INDEX_OF`, `LEFT`, `RIGHT`, `LENGTH`, `LOWER`, `UPPER`, `LTRIM`,
//! `RTRIM`, `TRIM`, `REPLACE`, `REPLICATE`, `REVERSE`, `SUBSTRING`,
//! `StringEquals`, `StringJoin`, `StringSplit`. Conversions (`StringTo*`,
//! `ToString`) are in `conversion.rs`, `RegexMatch` in `regex.rs`.
//!
//! Positions and lengths count characters (Unicode scalar values), never
//! bytes, so no slice can fall inside a character. Every string a function
//! builds is charged to the row's memory budget.

use serde_json::Value;

use super::{array, charge, flag, integer_part, num, string, Args, Function};

/// The documented cap on `REPLICATE`'s result, in characters.
pub const MAX_REPLICATE_CHARS: usize = 10_000;

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("CONCAT", concat),
    ("CONTAINS", |a| compare(a, |s, p| s.contains(p))),
    ("ENDSWITH", |a| compare(a, |s, p| s.ends_with(p))),
    ("STARTSWITH", |a| compare(a, |s, p| s.starts_with(p))),
    ("STRINGEQUALS", |a| compare(a, |s, p| s == p)),
    ("INDEX_OF", index_of),
    ("LEFT", |a| take(a, false)),
    ("RIGHT", |a| take(a, true)),
    ("LENGTH", |a| {
        (a.len() == 1).then_some(())?;
        Some(Value::from(string(a, 0)?.chars().count()))
    }),
    ("LOWER", |a| unary(a, str::to_lowercase)),
    ("UPPER", |a| unary(a, str::to_uppercase)),
    ("LTRIM", |a| trim(a, true, false)),
    ("RTRIM", |a| trim(a, false, true)),
    ("TRIM", |a| trim(a, true, true)),
    ("REPLACE", replace),
    ("REPLICATE", replicate),
    ("REVERSE", |a| unary(a, |s| s.chars().rev().collect())),
    ("SUBSTRING", substring),
    ("STRINGJOIN", join),
    ("STRINGSPLIT", split),
];

/// A new string, charged to the budget.
fn built(args: &Args, text: String) -> Option<Value> {
    charge(args.run(), text.len())?;
    Some(Value::String(text))
}

fn unary(args: &Args, f: fn(&str) -> String) -> Option<Value> {
    (args.len() == 1).then_some(())?;
    built(args, f(string(args, 0)?))
}

/// Two or more strings, joined.
fn concat(args: &Args) -> Option<Value> {
    if args.len() < 2 {
        return None;
    }
    let parts = (0..args.len())
        .map(|i| string(args, i))
        .collect::<Option<Vec<&str>>>()?;
    charge(
        args.run(),
        parts.iter().map(|p| p.len()).fold(0, usize::saturating_add),
    )?;
    Some(Value::String(parts.concat()))
}

/// `CONTAINS`, `STARTSWITH`, `ENDSWITH`, `StringEquals`: two strings and
/// an optional boolean to ignore case.
fn compare(args: &Args, test: fn(&str, &str) -> bool) -> Option<Value> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let (s, part) = (string(args, 0)?, string(args, 1)?);
    Some(Value::Bool(if flag(args, 2)? {
        let (s, part) = (s.to_lowercase(), part.to_lowercase());
        charge(args.run(), s.len().saturating_add(part.len()))?;
        test(&s, &part)
    } else {
        test(s, part)
    }))
}

/// The character position of the first occurrence of the second string
/// at or after the optional start (a negative start counts as 0), or -1.
fn index_of(args: &Args) -> Option<Value> {
    if !(2..=3).contains(&args.len()) {
        return None;
    }
    let (s, part) = (string(args, 0)?, string(args, 1)?);
    let start = match args.get(2) {
        None => 0,
        Some(_) => integer_part(num(args, 2)?).max(0),
    };
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    let Some((byte_start, _)) = s.char_indices().chain([(s.len(), ' ')]).nth(start) else {
        return Some(Value::from(-1));
    };
    Some(match s[byte_start..].find(part) {
        Some(at) => {
            Value::from(start.saturating_add(s[byte_start..byte_start + at].chars().count()))
        }
        None => Value::from(-1),
    })
}

/// `LEFT` or `RIGHT` (`from_end`): at most that many characters (none for
/// a negative count).
fn take(args: &[Option<Value>], from_end: bool) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    let s = string(args, 0)?;
    let n = usize::try_from(integer_part(num(args, 1)?).max(0)).unwrap_or(usize::MAX);
    let total = s.chars().count();
    let text: String = if from_end {
        s.chars().skip(total.saturating_sub(n)).collect()
    } else {
        s.chars().take(n).collect()
    };
    Some(Value::String(text))
}

/// Whitespace, or every character of the optional second string, removed
/// from the start and/or the end.
fn trim(args: &[Option<Value>], start: bool, end: bool) -> Option<Value> {
    let s = string(args, 0)?;
    let trimmed = match args.len() {
        1 => match (start, end) {
            (true, true) => s.trim(),
            (true, false) => s.trim_start(),
            _ => s.trim_end(),
        },
        2 => {
            let set: Vec<char> = string(args, 1)?.chars().collect();
            let mut t = s;
            if start {
                t = t.trim_start_matches(set.as_slice());
            }
            if end {
                t = t.trim_end_matches(set.as_slice());
            }
            t
        }
        _ => return None,
    };
    Some(Value::String(trimmed.to_owned()))
}

/// Every occurrence of the second string replaced by the third (an empty
/// string to find replaces nothing).
fn replace(args: &Args) -> Option<Value> {
    (args.len() == 3).then_some(())?;
    let (s, from, to) = (string(args, 0)?, string(args, 1)?, string(args, 2)?);
    if from.is_empty() {
        return Some(Value::String(s.to_owned()));
    }
    let count = s.matches(from).count();
    let size = s
        .len()
        .saturating_add(count.saturating_mul(to.len()))
        .saturating_sub(count.saturating_mul(from.len()));
    charge(args.run(), size)?;
    Some(Value::String(s.replace(from, to)))
}

/// The string repeated a whole number of times, at most 10,000 characters
/// in all; undefined for a negative count or a longer result.
fn replicate(args: &Args) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    let s = string(args, 0)?;
    let times = num(args, 1)?;
    if !times.is_finite() || times < 0.0 {
        return None;
    }
    let times = usize::try_from(integer_part(times)).unwrap_or(usize::MAX);
    if s.chars().count().saturating_mul(times) > MAX_REPLICATE_CHARS {
        return None;
    }
    built(args, s.repeat(times))
}

/// Zero-based start and length in characters, both clamped to the string.
fn substring(args: &Args) -> Option<Value> {
    (args.len() == 3).then_some(())?;
    let s = string(args, 0)?;
    let start = usize::try_from(integer_part(num(args, 1)?).max(0)).unwrap_or(usize::MAX);
    let len = usize::try_from(integer_part(num(args, 2)?).max(0)).unwrap_or(usize::MAX);
    Some(Value::String(s.chars().skip(start).take(len).collect()))
}

/// The strings of an array joined by a separator; undefined if an item is
/// not a string.
fn join(args: &Args) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    let items = array(args, 0)?;
    let separator = string(args, 1)?;
    let parts = items
        .iter()
        .map(Value::as_str)
        .collect::<Option<Vec<&str>>>()?;
    let size = parts
        .iter()
        .map(|p| p.len().saturating_add(separator.len()))
        .fold(0, usize::saturating_add);
    charge(args.run(), size)?;
    Some(Value::String(parts.join(separator)))
}

/// The pieces between occurrences of a delimiter; an empty delimiter
/// leaves the string whole.
fn split(args: &Args) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    let (s, delimiter) = (string(args, 0)?, string(args, 1)?);
    let pieces: Vec<Value> = if delimiter.is_empty() {
        vec![Value::String(s.to_owned())]
    } else {
        s.split(delimiter)
            .map(|p| Value::String(p.to_owned()))
            .collect()
    };
    charge(
        args.run(),
        s.len().saturating_add(pieces.len().saturating_mul(16)),
    )?;
    Some(Value::Array(pieces))
}

#[cfg(test)]
mod tests;
