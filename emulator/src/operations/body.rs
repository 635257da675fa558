//! Reading a request's body, whatever carried it: a JSON object or a typed
//! request (a query, a patch) within the service's limits, or the 400 or
//! 413 that says what is wrong.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::json::{self, JsonError};
use crate::protocol::limits::{MAX_NESTING_DEPTH, MAX_REQUEST_BYTES};

/// The body whole, or the service's 413 when it is over the request limit
/// (measured as sent, escapes included).
pub fn within_limit(body: &[u8]) -> ApiResult<&[u8]> {
    match body.len() > MAX_REQUEST_BYTES {
        true => Err(too_large(Some(body.len()))),
        false => Ok(body),
    }
}

/// The service's words come first, in its gateway's own form (the
/// JavaScript SDK's executeBulkOperations test looks for them whole);
/// `None`: too large to be read at all.
pub fn too_large(size: Option<usize>) -> ApiError {
    ApiError::too_large(format!(
        "Message: {{\"Errors\":[\"Request size is too large\"]}}\r\nThe body is {} bytes; a \
         request, and an item, may be at most {MAX_REQUEST_BYTES} bytes (2 MB).",
        size.map_or_else(|| "over 16 MB".to_string(), |n| n.to_string())
    ))
}

/// The body as a JSON object, or a 400 that says what is wrong.
pub fn object(body: &[u8]) -> ApiResult<Map<String, Value>> {
    match json::parse_bounded::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => Err(ApiError::bad_request(format!(
            "The request body must be a JSON object, got {}.",
            kind(&other)
        ))),
        Err(e) => Err(json_error("request", e)),
    }
}

/// The body as a typed request (query, patch), or a 400 naming the problem.
pub fn typed<T: DeserializeOwned>(body: &[u8], what: &str) -> ApiResult<T> {
    json::parse_bounded(body).map_err(|e| json_error(what, e))
}

/// A body the JSON parser refused: nesting past the service's limit is said
/// in the limit's words, anything else with the parser's own.
fn json_error(what: &str, error: JsonError) -> ApiError {
    match error {
        JsonError::TooDeep(depth) => ApiError::bad_request(format!(
            "The {what} body nests objects and arrays {depth} levels deep; the service allows at \
             most {MAX_NESTING_DEPTH} levels (the document itself is the first). Flatten it."
        )),
        JsonError::Invalid(e) => ApiError::bad_request(format!("The {what} body is invalid: {e}.")),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_body_may_be() {
        assert!(object(br#"{"id":"a"}"#).is_ok());
        let array = object(b"[1]").unwrap_err();
        assert!(array.message.contains("got an array"), "{}", array.message);
        let broken = object(b"{").unwrap_err();
        assert!(broken.message.starts_with("The request body is invalid"));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let refused = object(deep.as_bytes()).unwrap_err();
        assert!(
            refused.message.contains("levels deep"),
            "{}",
            refused.message
        );
        let big = vec![b' '; MAX_REQUEST_BYTES + 1];
        assert_eq!(within_limit(&big).unwrap_err().status, 413);
        assert!(within_limit(b"{}").is_ok());
    }
}
