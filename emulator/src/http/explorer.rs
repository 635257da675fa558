//! `GET /_explorer/index.html` (and `/_explorer/`): a placeholder for the
//! data explorer, which container tools poll to learn that the emulator is
//! up. It says what is running and where; the explorer itself comes later.
//! Off with `--enable-explorer false` (then 404).

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};

use super::{account, AppState};

pub async fn page(State(state): State<AppState>, uri: Uri, headers: HeaderMap) -> Response {
    // The endpoint comes from the client's Host header: escaped, never trusted.
    let endpoint = escape(account::endpoint(&state, &uri, &headers).trim_end_matches('/'));
    let version = env!("CARGO_PKG_VERSION");
    let certificate = if state.certificate.is_some() {
        r#"<p>It serves HTTPS with a certificate made at start: have clients trust
<a href="/_explorer/emulator.pem">emulator.pem</a>.</p>"#
    } else {
        "<p>It serves plain HTTP (start it with <code>--tls</code> for HTTPS).</p>"
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>cosmos-emulator {version}</title></head>
<body>
<h1>cosmos-emulator {version}</h1>
<p>A local Azure Cosmos DB (NoSQL) endpoint is serving at <code>{endpoint}</code>.
Connect an SDK to it with the emulator's key.</p>
{certificate}
<p>There is no data explorer here yet: this page stands in for it.</p>
</body>
</html>
"#
    );
    ([(CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
