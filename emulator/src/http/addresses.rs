//! `GET /addresses/?$resolveFor=...&$filter=protocol eq rntbd&$partitionKeyRangeIds=...`
//! on the wire: the address feed (`operations/addresses.rs`), with the
//! host and port the client reached this endpoint at. Its signature names
//! what it resolves, not its own path (`get`, `docs`, the container's RID
//! lower-cased; the master's `get`, `dbs`, empty): [`signed_path`] gives
//! `mod.rs`'s authentication the path that signs so.

use axum::extract::State;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::Extension;
use percent_encoding::percent_decode_str;

use super::response::from_operation;
use super::AppState;
use crate::net::transport::ConnectionScheme;
use crate::operations::addresses::{self, Resolve};

/// The feed's path (trailing slash trimmed).
pub const PATH: &str = "/addresses";

/// The query parameter `name`, decoded (`+` and `%20` as spaces).
fn parameter(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        let key = percent_decode_str(key).decode_utf8_lossy();
        (key == name).then(|| {
            let value = value.replace('+', " ");
            percent_decode_str(&value).decode_utf8_lossy().into_owned()
        })
    })
}

/// The path whose signature a request for the feed carries: what it
/// resolves (`/dbs/{db rid}/colls/{coll rid}/docs`, signed with the
/// container's RID; `/dbs` for the master partition).
pub fn signed_path(uri: &Uri) -> Option<String> {
    let resolve_for = parameter(uri, "$resolveFor")?;
    Some(format!("/{}", resolve_for.trim_matches('/')))
}

/// `GET /addresses`: the replicas of what `$resolveFor` names.
pub async fn read(
    State(state): State<AppState>,
    connection: Option<Extension<ConnectionScheme>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let scheme = connection.map_or(state.scheme, |Extension(c)| c.0);
    // The host and port of the account document's endpoint: Direct mode's
    // replicas are on the port that serves the gateway.
    let endpoint = super::account::endpoint(&state, scheme, &uri, &headers);
    let authority = super::account::authority_of(&endpoint);
    let authority = match authority
        .parse::<Authority>()
        .ok()
        .and_then(|a| a.port_u16())
    {
        Some(_) => authority.to_string(),
        // Addressed without a port: the scheme's.
        None => format!("{authority}:{}", if scheme == "https" { 443 } else { 80 }),
    };
    let resolve_for = parameter(&uri, "$resolveFor").unwrap_or_default();
    let range_ids = parameter(&uri, "$partitionKeyRangeIds");
    let request = Resolve {
        resolve_for: &resolve_for,
        range_ids: range_ids.as_deref(),
        authority: &authority,
    };
    from_operation(addresses::list(&state.serving(), request), &uri)
}
