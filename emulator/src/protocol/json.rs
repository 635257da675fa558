//! JSON within the service's nesting limit: objects and arrays nest at most
//! [`MAX_NESTING_DEPTH`] levels, the document itself the first.
//!
//! serde_json's own guard stops one level short of that (127), so a body it
//! refuses for depth alone is measured here and, when within the limit,
//! parsed again without serde_json's guard: the recursion stays bounded by
//! the measured depth. Stored items are within the limit by construction
//! and are parsed without the guard.

use serde::de::DeserializeOwned;

use crate::protocol::limits::MAX_NESTING_DEPTH;

/// Why a body could not be read.
pub enum JsonError {
    /// Nested deeper than the limit; the depth found.
    TooDeep(usize),
    Invalid(serde_json::Error),
}

/// Parses a request body, refusing nesting deeper than the limit.
pub fn parse_bounded<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonError> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            let depth = nesting_depth(bytes);
            if depth > MAX_NESTING_DEPTH {
                Err(JsonError::TooDeep(depth))
            } else {
                parse_unguarded(bytes).map_err(JsonError::Invalid)
            }
        }
        Err(e) => Err(JsonError::Invalid(e)),
    }
}

/// Parses JSON already known to be within the limit (a stored item).
pub fn parse_unguarded<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// The deepest nesting of objects and arrays in JSON text, without parsing
/// it: brackets inside strings do not count. Text that is not JSON gets
/// some number; the parser refuses it afterwards.
pub fn nesting_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn the_limit_is_exact_and_strings_do_not_count() {
        assert_eq!(
            nesting_depth(br#"{"a": "[[[{{{", "b": [1, {"c": "\"]"}]}"#),
            3
        );
        assert!(parse_bounded::<Value>(nested(MAX_NESTING_DEPTH).as_bytes()).is_ok());
        assert!(matches!(
            parse_bounded::<Value>(nested(MAX_NESTING_DEPTH + 1).as_bytes()),
            Err(JsonError::TooDeep(129))
        ));
        assert!(matches!(
            parse_bounded::<Value>(b"[[1]"),
            Err(JsonError::Invalid(_))
        ));
        let stored = nested(MAX_NESTING_DEPTH);
        assert!(parse_unguarded::<Value>(stored.as_bytes()).is_ok());
        assert!(parse_unguarded::<Value>(b"[] trailing").is_err());
    }
}
