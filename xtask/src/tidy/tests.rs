//! The tidy checks against planted sources: each way a file could break a
//! rule (a `super::` chain, a grouped `use`, `StatusCode` in the store, a
//! lock unwrapped over lines) must be caught, so that a check passing on
//! the real tree means something.

use super::layers::{layer_violations, module_edges};
use super::paths::EMULATOR_SRC;
use super::speaks_http::http_below_the_adapter;
use super::{unwraps_a_lock, Source};

/// A source planted at `path` (from `emulator/src/`), for the tests that
/// show each check catches what it is for.
fn planted(path: &str, text: &str) -> Source {
    Source {
        path: format!("{EMULATOR_SRC}{path}"),
        text: format!("//! Planted.\n{text}\n"),
    }
}

#[test]
fn the_layers_check_catches_every_way_query_could_name_the_store() {
    for (file, text) in [
        ("data/query/planted.rs", "use super::super::store::Store;"),
        ("data/query/planted.rs", "use crate::{data::store::Store};"),
        (
            "data/query/planted.rs",
            "use crate::{protocol::json, data::store::{Item, Store}};",
        ),
        (
            "data/query/planted.rs",
            "use super::{super::store::Store, ast};",
        ),
        (
            "data/query/planted/mod.rs",
            "use super::super::store::Store;",
        ),
        (
            "data/query/a/b.rs",
            "fn f() -> super::super::super::store::Item { todo!() }",
        ),
        (
            "data/query/planted.rs",
            "mod tests { use super::super::super::store::Store; }",
        ),
    ] {
        let sources = [
            planted(file, text),
            planted("data/store/mod.rs", "pub struct Store;"),
        ];
        let wrong = layer_violations(module_edges(&sources));
        assert!(
            wrong
                .iter()
                .any(|line| line.starts_with("data::query may not name data::store")),
            "{file}: {text} passed: {wrong:?}"
        );
    }
    // What stays inside the engine is no edge.
    for text in [
        "use super::ast::Select;",
        "use super::{ast, eval::Value};",
        "mod tests { use super::super::ast::Select; }",
    ] {
        let sources = [
            planted("data/query/a.rs", text),
            planted("data/store/mod.rs", ""),
        ];
        let wrong = layer_violations(module_edges(&sources));
        assert!(wrong.is_empty(), "{text}: {wrong:?}");
    }
}

#[test]
fn the_no_http_check_catches_http_in_the_store() {
    for text in [
        "use http::StatusCode;",
        "fn f() -> StatusCode { todo!() }",
        "fn f() { let _ = http::StatusCode::OK; }",
        "use axum::{http::HeaderMap};",
        "use ::http::Method;",
        "fn f(_: hyper::body::Incoming) {}",
    ] {
        let found = http_below_the_adapter(&[planted("data/store/planted.rs", text)]);
        assert!(!found.is_empty(), "{text} passed");
        let found = http_below_the_adapter(&[planted("new_module.rs", text)]);
        assert!(!found.is_empty(), "{text} passed in a module no list names");
        let found = http_below_the_adapter(&[planted("http/planted.rs", text)]);
        assert!(found.is_empty(), "the adapter may: {found:?}");
    }
    for text in [
        "use crate::error::Status; // not a StatusCode",
        "const S: &str = \"http::StatusCode\";",
        "use tower_http::cors; fn httpdate() {} use crate::http::app;",
    ] {
        let found = http_below_the_adapter(&[planted("data/store/planted.rs", text)]);
        assert!(found.is_empty(), "{text}: {found:?}");
    }
}

#[test]
fn the_lock_check_catches_an_unwrap_over_lines() {
    for text in [
        "self.state.lock().unwrap()",
        "self.state\n    .read()\n    .unwrap()\n    .get(k)",
        "self.state.write().expect(\"not poisoned\")",
        "if durable.compacting.try_lock().is_err() { return; }",
        "let Some(rules) = self.rules.lock().ok() else { return };",
    ] {
        assert!(unwraps_a_lock(text), "{text}");
    }
    assert!(!unwraps_a_lock(
        "self.state\n    .lock()\n    .unwrap_or_else(|e| e.into_inner())"
    ));
}
