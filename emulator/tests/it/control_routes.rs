//! The control API's route table (`ROUTES`, `emulator/src/control/mod.rs`)
//! against what serves and describes it: every route of the table is
//! served (a signed request meets its handler, not the 404 of an unknown
//! path or a 405), and every route is on the reference page
//! (`docs/src/reference/control-api.md`, as a `` ### `METHOD /path` ``
//! heading) and called by the Python package's client
//! (`packages/python/src/cosmos_emulator/_control.py`) and the npm
//! package's (`packages/npm/cosmos-emulator/lib/control.js`). A failure
//! names the missing routes; `CONTRIBUTING.md`'s "Add a control route"
//! says where each goes.

use std::path::PathBuf;

use cosmos_emulator::control::{ControlRoute, ROUTES};
use reqwest::Method;
use serde_json::json;

use crate::common::TestClient;

fn repository_file(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The routes `covered` does not cover, one a line.
fn missing(covered: impl Fn(&ControlRoute) -> bool) -> Vec<String> {
    ROUTES
        .iter()
        .filter(|route| !covered(route))
        .map(|route| format!("{} {} ({})", route.method, route.path, route.summary))
        .collect()
}

/// Whether `line` holds `path` as a client writes it: a string (quoted
/// with `"`, `'` or a backtick) that starts at the path's first segment
/// (`_emulator/...`, without the leading `/`, which the clients join to
/// the endpoint), each `{param}` an interpolation (`{expr}` in a Python
/// f-string, `${expr}` in a JavaScript template) and nothing after it.
fn calls_path(line: &str, path: &str) -> bool {
    let pattern = path.trim_start_matches('/');
    let quotes = ['"', '\'', '`'];
    line.match_indices(pattern.split('{').next().unwrap_or(pattern))
        .any(|(at, _)| {
            let opened = line[..at].ends_with(quotes);
            opened
                && matches_from(&line[at..], pattern).is_some_and(|rest| rest.starts_with(quotes))
        })
}

/// Matches `pattern` (literal text and `{param}`s) at the start of `text`;
/// the text after the match.
fn matches_from<'t>(text: &'t str, pattern: &str) -> Option<&'t str> {
    let mut text = text;
    let mut pattern = pattern;
    while !pattern.is_empty() {
        match pattern.find('{') {
            None => return text.strip_prefix(pattern),
            Some(0) => {
                // A parameter: one interpolation, braces balanced, no `/`.
                let end = pattern.find('}')? + 1;
                pattern = &pattern[end..];
                let body = text.strip_prefix('$').unwrap_or(text).strip_prefix('{')?;
                let mut depth = 1;
                let close = body.char_indices().find_map(|(i, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(i)
                })?;
                if close == 0 || body[..close].contains('/') {
                    return None;
                }
                text = &body[close + 1..];
            }
            Some(literal) => {
                text = text.strip_prefix(&pattern[..literal])?;
                pattern = &pattern[literal..];
            }
        }
    }
    Some(text)
}

/// Whether a client's source calls the route: its method (as a quoted
/// string) and its path on one line.
fn client_calls(source: &str, route: &ControlRoute) -> bool {
    let method = format!("\"{}\"", route.method);
    source
        .lines()
        .any(|line| line.contains(&method) && calls_path(line, route.path))
}

#[test]
fn the_reference_page_lists_every_route() {
    let page = repository_file("docs/src/reference/control-api.md");
    let headings: Vec<&str> = page
        .lines()
        .filter_map(|line| line.strip_prefix("### "))
        .collect();
    let missing = missing(|route| {
        let heading = format!("`{} {}`", route.method, route.path);
        headings.iter().any(|h| h.trim() == heading)
    });
    assert!(
        missing.is_empty(),
        "docs/src/reference/control-api.md has no ### `METHOD /path` heading for:\n{}",
        missing.join("\n")
    );
    // And nothing more: a heading for a route the table does not have.
    let documented: Vec<&&str> = headings
        .iter()
        .filter(|h| h.contains("/_emulator/"))
        .filter(|h| {
            !ROUTES
                .iter()
                .any(|r| h.trim() == format!("`{} {}`", r.method, r.path))
        })
        .collect();
    assert!(
        documented.is_empty(),
        "the reference page describes routes that ROUTES lacks: {documented:?}"
    );
}

#[test]
fn the_python_client_calls_every_route() {
    let source = repository_file("packages/python/src/cosmos_emulator/_control.py");
    let missing = missing(|route| client_calls(&source, route));
    assert!(
        missing.is_empty(),
        "packages/python/src/cosmos_emulator/_control.py calls no:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_npm_client_calls_every_route() {
    let source = repository_file("packages/npm/cosmos-emulator/lib/control.js");
    let missing = missing(|route| client_calls(&source, route));
    assert!(
        missing.is_empty(),
        "packages/npm/cosmos-emulator/lib/control.js calls no:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_matcher_tells_a_call_from_a_near_miss() {
    let call = |line: &str, path: &str| calls_path(line, path);
    assert!(call(
        r#"self._request("GET", "_emulator/clock", None)"#,
        "/_emulator/clock"
    ));
    assert!(call(
        r#"f"_emulator/snapshots/{_segment(name, 'x')}/restore", {})"#,
        "/_emulator/snapshots/{name}/restore"
    ));
    assert!(call(
        "`_emulator/regions/${segment(region)}/down`, body)",
        "/_emulator/regions/{name}/down"
    ));
    // `faults/{id}` is not `faults`, nor the other way round.
    assert!(!call(
        r#"f"_emulator/faults/{_segment(rule_id, 'id')}""#,
        "/_emulator/faults"
    ));
    assert!(!call(r#""_emulator/faults""#, "/_emulator/faults/{id}"));
    // A path in a comment or a longer path is no call.
    assert!(!call("# POST _emulator/clock", "/_emulator/clock"));
    assert!(!call(r#""_emulator/clocks""#, "/_emulator/clock"));
    assert!(!call(
        r#"f"_emulator/snapshots/{name}""#,
        "/_emulator/snapshots/{name}/restore"
    ));
}

/// A value for each path parameter: a request that reaches the handler,
/// which may refuse it (no such snapshot) but in its own words.
fn concrete(path: &str) -> String {
    path.replace("{name}", "nowhere").replace("{id}", "none")
}

/// Every route of the table is served: signed, it reaches its handler
/// (whatever the handler answers), never the router's 404 for a path that
/// names nothing nor a 405; a method the table does not list on a control
/// path is a 405.
#[test]
fn every_route_of_the_table_is_served() {
    let c = TestClient::start();
    for route in ROUTES {
        let body = json!({});
        let reply = c.send(
            route.method.clone(),
            &concrete(route.path),
            &[],
            (route.method != Method::GET && route.method != Method::DELETE).then_some(&body),
        );
        assert_ne!(reply.status, 405, "{route:?}: {:?}", reply.body);
        assert!(
            !(reply.status == 404 && reply.message().contains("this path names no resource")),
            "{route:?} is not served: {:?}",
            reply.body
        );
    }
    for (method, path) in [
        (Method::PATCH, "/_emulator/clock"),
        (Method::PUT, "/_emulator/faults"),
        (Method::GET, "/_emulator/purge"),
    ] {
        let reply = c.send(method.clone(), path, &[], None);
        assert_eq!(reply.status, 405, "{method} {path}: {:?}", reply.body);
    }
}
