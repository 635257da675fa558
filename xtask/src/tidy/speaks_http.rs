//! No HTTP below the adapter: only the modules that serve or speak HTTP
//! ([`SPEAKS_HTTP`]) name `StatusCode`, the `http` crate, `axum` or
//! `hyper`; the store, the engines and the leaves speak their own language
//! (`error.rs`'s `Status`, the store's `Written`), so that a second
//! protocol could reuse them whole.

use std::collections::BTreeSet;

use super::paths::{code_of, is_ident, module_of, EMULATOR_SRC};
use super::{rust_sources, Source};

/// The top-level modules of `emulator/src` that may name HTTP's types
/// (`StatusCode`, the `http` crate, `axum`, `hyper`), and why. Every other
/// module, a new one included, speaks the emulator's own language: a
/// second protocol (Direct mode's RNTBD) must be able to reuse it whole.
/// Those that need no HTTP type are not here, though they serve HTTP:
/// `endpoints` (it names our `http` module only), `tls` (certificates),
/// `probe` (one `GET` written by hand with the standard library),
/// `settings` and `main.rs`.
const SPEAKS_HTTP: &[(&str, &str)] = &[
    ("http", "the adapter: requests in, responses out"),
    (
        "net::transport",
        "accepted connections become HTTP requests",
    ),
    (
        "binary::health",
        "the health server: an HTTP router of its own",
    ),
    ("lib", "the crate's root: binds and serves the HTTP app"),
    (
        "control",
        "the control API: routes of its own beside the resources' (/_emulator/...)",
    ),
    ("endpoints", "assembles the HTTP app of each endpoint"),
];

/// The names of HTTP that `code` (comments and strings blanked, groups
/// flattened) uses: `StatusCode`, `axum`, `hyper` as words, and the `http`
/// crate (`http::`, but not a module of ours named so: `crate::http::`,
/// `super::http::`, `self::http::`).
fn http_names(code: &str) -> BTreeSet<&'static str> {
    let bytes = code.as_bytes();
    let mut found = BTreeSet::new();
    for name in ["StatusCode", "axum", "hyper", "http"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(name).map(|at| from + at) {
            from = at + name.len();
            let before = at.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(is_ident) || bytes.get(from).copied().is_some_and(is_ident) {
                continue;
            }
            if name == "http" {
                let ours = ["crate::", "super::", "self::"]
                    .iter()
                    .any(|module| code[..at].ends_with(module));
                if ours || !code[from..].starts_with("::") {
                    continue;
                }
            }
            found.insert(name);
        }
    }
    found
}

/// What of HTTP the files of `sources` below the adapter name: every file
/// of `emulator/src` (`main.rs` included) outside [`SPEAKS_HTTP`].
pub(super) fn http_below_the_adapter(sources: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for source in sources {
        if !source.path.starts_with(EMULATOR_SRC) {
            continue;
        }
        let module = module_of(&source.path).unwrap_or_else(|| "main".into());
        if SPEAKS_HTTP.iter().any(|(speaks, _)| *speaks == module) {
            continue;
        }
        for name in http_names(&code_of(&source.text)) {
            found.push(format!(
                "{} names {name}: below the HTTP adapter, use the emulator's own types \
                 (error.rs's Status, the store's Written), or place the module in \
                 SPEAKS_HTTP (xtask/src/tidy/speaks_http.rs) with why",
                source.path
            ));
        }
    }
    found
}

#[test]
fn no_http_below_the_adapter() {
    let found = http_below_the_adapter(&rust_sources(EMULATOR_SRC));
    assert!(found.is_empty(), "{}", found.join("\n"));
}
