//! The data explorer: a page served by the emulator itself at
//! `/_explorer/index.html` (and `/_explorer/`), which container tools also
//! poll to learn that the emulator is up. Public, as on Microsoft's
//! emulator; every data request the page makes is signed with the account
//! key in the browser, so it adds no unauthenticated access to data. Off
//! with `--enable-explorer false` (then 404).
//!
//! The page is plain JavaScript modules and one stylesheet under `assets/`,
//! built into the binary: nothing is fetched from the network at run time
//! and nothing is built beyond `cargo build`. What it shows of items'
//! lifetimes comes from `POST /_emulator/lifetimes` (`ttl::explain`).

use axum::extract::Path;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
};
use axum::response::{IntoResponse, Response};

use crate::protocol::error::ApiError;

/// The page, with `{version}` in it.
const INDEX: &str = include_str!("assets/index.html");

/// Each other asset: its file name under `/_explorer/`, content type and text.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("assets/style.css"),
    ),
    ("main.js", JS, include_str!("assets/main.js")),
    ("api.js", JS, include_str!("assets/api.js")),
    ("hmac.js", JS, include_str!("assets/hmac.js")),
    ("dom.js", JS, include_str!("assets/dom.js")),
    ("ttl-text.js", JS, include_str!("assets/ttl-text.js")),
    ("items.js", JS, include_str!("assets/items.js")),
    ("query.js", JS, include_str!("assets/query.js")),
    ("settings.js", JS, include_str!("assets/settings.js")),
    ("feed.js", JS, include_str!("assets/feed.js")),
];

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// Scripts and styles from the page's own origin only (no inline script,
/// nothing from elsewhere); requests go back to the emulator alone.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// `/_explorer/` and `/_explorer/index.html`, which names the version.
pub async fn page() -> Response {
    static PAGE: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| INDEX.replace("{version}", env!("CARGO_PKG_VERSION")));
    respond(HTML, PAGE.as_str())
}

/// `/_explorer/{file}`: one of the page's other assets, else 404 (the
/// page's own routes are matched before this one).
pub async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, text)) => respond(content_type, text),
        None => ApiError::not_found()
            .with_message(format!(
                "The data explorer has no file '{file}': open /_explorer/index.html."
            ))
            .into_response(),
    }
}

fn respond(content_type: &'static str, text: &'static str) -> Response {
    (
        [
            (CONTENT_TYPE, content_type),
            (CONTENT_SECURITY_POLICY, POLICY),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // The assets change only with the binary; the page asks again
            // on every load so that an upgraded emulator is seen at once.
            (CACHE_CONTROL, "no-cache"),
        ],
        text,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module the page imports is served, so that a new file is never
    /// forgotten in `ASSETS` (the browser tests would see a blank page).
    #[test]
    fn every_imported_module_is_an_asset() {
        for (name, _, text) in ASSETS {
            for line in text.lines() {
                let Some(from) = line.split(" from \"./").nth(1) else {
                    continue;
                };
                let module = from.split('"').next().unwrap();
                assert!(
                    ASSETS.iter().any(|(n, _, _)| *n == module),
                    "{name} imports ./{module}, which is not served"
                );
            }
        }
        for referenced in ["style.css", "main.js"] {
            assert!(INDEX.contains(&format!("/_explorer/{referenced}")));
            assert!(ASSETS.iter().any(|(n, _, _)| *n == referenced));
        }
    }
}
