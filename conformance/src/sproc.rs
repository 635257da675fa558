//! The `sproc` step: runs a stored procedure in the case's partition
//! (`POST .../colls/c/sprocs/{id}`, `docs/src/reference/script-facts.md#execution`), to check that TTL
//! holds inside server-side JavaScript: an expired item is absent to every
//! read path of the script API and its id is free (R5, L10), a script's
//! write restarts the countdown (R6), an invalid `ttl` fails the write and,
//! rethrown, the whole execution, which stores nothing (R9).
//!
//! ```toml
//! [scripts]
//! create = '''function (doc) { ... }'''
//!
//! [[case]]
//! steps = [{ at = 0, sproc = "create", args = '[{"id": "a", "ttl": 10}]', expect = '200 "ok"' }]
//! ```
//!
//! Scripts are named in the file's `[scripts]` table (name = JavaScript
//! text) so that steps stay one line and several steps or cases share one.
//! The runner creates each script once per case's container as a stored
//! procedure whose id is a hash of its text ([`id`]), then executes it with
//! the case's partition key header and `args` (a JSON array, default `[]`).
//!
//! The partition key and the wall clock: every JSON object among the
//! arguments gets `"pk": "<case id>"` (unless it has a `pk`) and, on the
//! wall clock, its top-level `ttl` scaled, exactly like an item body of a
//! `create` step. So a script writes items it receives as arguments, and
//! takes every TTL value it writes from its arguments; the loader refuses a
//! script with a literal TTL (`ttl: 10`), which the wall clock could not
//! scale. For the wall clock's judgement a step is a write (a countdown may
//! start at its time) when it has an object argument.
//!
//! The token is the status and the response body, which the service sends
//! as `JSON.stringify` of what the script gave `setBody` (`""` when it set
//! nothing), compact with sorted keys: `200 {"found":false}`, `200 "ok"`. A
//! failed execution is its status alone (`400`; the error's message is the
//! detail). The whole token decides the step. A stored procedure the target
//! would not create is `not created (<status>)`, which no expectation matches.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::client::{describe, excerpt, Response};
use crate::clock::WallClock;
use crate::fixtures::canonical::canonical;
use crate::fixtures::Sproc;
use crate::outcome::Observed;

/// Checks one entry of a file's `[scripts]`: a name of letters, digits,
/// `-` and `_`, a non-empty text, and no literal TTL value in it.
pub fn check_script(name: &str, body: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "script name {name:?}: letters, digits, '-' and '_' only"
        ));
    }
    if body.trim().is_empty() {
        return Err(format!("script {name:?} is empty"));
    }
    if let Some(at) = literal_ttl(body) {
        return Err(format!(
            "script {name:?} writes a literal TTL ({:?}): take TTL values from the arguments, where the wall clock scales them",
            body[at..].chars().take(12).collect::<String>()
        ));
    }
    Ok(())
}

/// Where `ttl` is followed by `:` or `=` (not `==`) and a number.
fn literal_ttl(body: &str) -> Option<usize> {
    body.match_indices("ttl").map(|(at, _)| at).find(|&at| {
        let rest = body[at + 3..].trim_start_matches(['"', '\'']).trim_start();
        let value = match rest.strip_prefix(':') {
            Some(value) => Some(value),
            None => rest.strip_prefix('=').filter(|v| !v.starts_with('=')),
        };
        value.is_some_and(|v| {
            v.trim_start()
                .starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
        })
    })
}

/// Reads a step's `args`: a JSON array.
pub fn parse_args(text: &str) -> Result<Vec<Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Array(args)) => Ok(args),
        Ok(_) => Err(format!("`args` is a JSON array: {text}")),
        Err(e) => Err(format!("`args` is not valid JSON ({e}): {text}")),
    }
}

/// The stored procedure's id: `ttl-` and the first 16 hex digits of the
/// SHA-256 of the text, so one text is one stored procedure per container.
pub fn id(body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("ttl-{hex}")
}

/// The `ttl` values the arguments carry (for the wall clock's judgement).
pub fn written_ttls(sproc: &Sproc) -> Vec<&Value> {
    sproc.args.iter().filter_map(|arg| arg.get("ttl")).collect()
}

/// The arguments as sent: each object with the partition key `pk` (unless
/// it has one), its `ttl` scaled on the wall clock; the rest as written.
pub fn arguments(sproc: &Sproc, pk: &str, wall: Option<&WallClock>) -> Value {
    let sent = sproc.args.iter().map(|arg| match arg {
        Value::Object(body) => {
            let mut body = match wall {
                Some(wall) => wall.body(body),
                None => body.clone(),
            };
            body.entry("pk").or_insert_with(|| json!(pk));
            Value::Object(body)
        }
        other => other.clone(),
    });
    Value::Array(sent.collect())
}

/// The token of an execution: `200 {"found":false}`, or `400`.
pub fn observe(response: &Response) -> Observed {
    let status = response.status;
    if !(200..300).contains(&status) {
        let detail = match response.error() {
            Some((code, message)) => format!("{code}: {message}"),
            None => format!("body: {}", excerpt(&response.body)),
        };
        return Observed {
            token: status.to_string(),
            detail: Some(detail),
        };
    }
    match response.json() {
        Some(body) => Observed {
            token: format!("{status} {}", canonical(&body)),
            detail: None,
        },
        None => Observed {
            token: format!("{status} (body is not JSON)"),
            detail: Some(format!("body: {}", excerpt(&response.body))),
        },
    }
}

/// The token when creating the stored procedure failed.
pub fn not_created(response: &Response) -> Observed {
    Observed {
        token: format!("not created ({})", response.status),
        detail: Some(format!(
            "creating the stored procedure answered {}",
            describe(response)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, body: &str) -> Response {
        Response {
            status,
            body: body.to_string(),
            ..Response::default()
        }
    }

    #[test]
    fn scripts_are_checked_for_names_and_literal_ttls() {
        assert_eq!(check_script("probe-1", "function () {}"), Ok(()));
        // Reading or comparing a ttl is fine; only writing a number is not.
        let reads = "function (d) { if (d.ttl === -1 || d.ttl == 5) { var t = d.ttl; } }";
        assert_eq!(check_script("p", reads), Ok(()));
        assert!(check_script("a b", "function () {}").is_err());
        assert!(check_script("p", "  ").is_err());
        for literal in [
            "{id: 'a', ttl: 10}",
            "d.ttl = -1;",
            "{\"ttl\": 1.5}",
            "{'ttl' : 0}",
        ] {
            let error = check_script("p", literal).unwrap_err();
            assert!(error.contains("literal TTL"), "{literal}: {error}");
        }
        // A string or null ttl is not scaled: allowed.
        assert_eq!(check_script("p", "{ttl: '10', x: {ttl: null}}"), Ok(()));
    }

    #[test]
    fn ids_labels_and_arguments() {
        use crate::fixtures::Action;
        let sproc = Sproc {
            name: "create".into(),
            body: "function (d) {}".into(),
            args: parse_args(r#"[{"id": "a", "ttl": 1000}, "b", {"id": "c", "pk": "x"}]"#).unwrap(),
        };
        assert_eq!(id(&sproc.body), id("function (d) {}"));
        assert_ne!(id(&sproc.body), id("function (e) {}"));
        assert_eq!(id(&sproc.body).len(), "ttl-".len() + 16);
        assert_eq!(
            Action::Sproc(sproc.clone()).label(),
            r#"sproc create [{"id":"a","ttl":1000},"b",{"id":"c","pk":"x"}]"#
        );
        assert_eq!(written_ttls(&sproc), [&json!(1000)]);
        let sent = arguments(&sproc, "case", Some(&WallClock::new(0.01).unwrap()));
        assert_eq!(
            sent,
            json!([{"id": "a", "ttl": 10, "pk": "case"}, "b", {"id": "c", "pk": "x"}])
        );
        assert_eq!(arguments(&sproc, "case", None)[0]["ttl"], 1000);
        let bare = Sproc {
            args: Vec::new(),
            ..sproc
        };
        assert_eq!(Action::Sproc(bare).label(), "sproc create");
        assert!(parse_args("{}").is_err());
        assert!(parse_args("[").is_err());
    }

    #[test]
    fn tokens_of_answers_and_expectations_agree() {
        let expect = |text| {
            let action = crate::fixtures::Action::Sproc(Sproc {
                name: "p".into(),
                body: "function () {}".into(),
                args: Vec::new(),
            });
            crate::fixtures::Expect::parse(text, &action)
                .unwrap()
                .token(None)
        };
        let ok = observe(&response(200, r#"{"found": false, "a": [1, 2]}"#));
        assert_eq!(ok.token, r#"200 {"a":[1,2],"found":false}"#);
        assert_eq!(expect(r#"200 {"found": false, "a": [1,2]}"#), ok.token);
        assert_eq!(observe(&response(200, r#""""#)).token, r#"200 """#);
        assert_eq!(expect(r#"200 "ok""#), r#"200 "ok""#);
        let failed = observe(&response(
            400,
            r#"{"code": "BadRequest", "message": "Error: 1234"}"#,
        ));
        assert_eq!(failed.token, "400");
        assert_eq!(failed.detail.as_deref(), Some("BadRequest: Error: 1234"));
        assert_eq!(expect("400"), failed.token);
        assert_eq!(observe(&response(200, "")).token, "200 (body is not JSON)");
        assert_eq!(not_created(&response(400, "")).token, "not created (400)");
    }
}
