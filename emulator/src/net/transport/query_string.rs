//! A resource path's query string read as part of its path, before
//! routing, as the service's gateway reads it: no Cosmos route takes a
//! query string, and a client that leaves `?` unescaped in an id
//! (`@azure/cosmos` 4.7.0's `encodeURI`) addresses the item whose id holds
//! it (its SDK's `RGW_idWithDisallowedCharQuestionMark`: 201, 200, 200,
//! 204). `/dbs/d/colls/c/docs/a?b` is served as `/dbs/d/colls/c/docs/a%3Fb`.

use std::task::{Context, Poll};

use axum::http::{Request, Uri};

/// `inner`, with each resource path's query string moved into its path.
#[derive(Debug, Clone)]
pub struct QueryIntoPath<S>(pub S);

impl<S, B> tower::Service<Request<B>> for QueryIntoPath<S>
where
    S: tower::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        if let Some(rewritten) = into_path(request.uri()) {
            *request.uri_mut() = rewritten;
        }
        self.0.call(request)
    }
}

/// The URI with its query string escaped onto its path, for a resource
/// path (`/dbs/...`) that has one.
fn into_path(uri: &Uri) -> Option<Uri> {
    let query = uri.query()?;
    if !uri.path().starts_with("/dbs/") {
        return None;
    }
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(format!("{}%3F{query}", uri.path()).parse().ok()?);
    Uri::from_parts(parts).ok()
}

#[cfg(test)]
mod tests {
    use super::into_path;

    #[test]
    fn a_resource_paths_query_string_joins_its_last_segment() {
        let moved = |uri: &str| into_path(&uri.parse().unwrap()).map(|u| u.to_string());
        assert_eq!(
            moved("/dbs/d/colls/c/docs/a?b").as_deref(),
            Some("/dbs/d/colls/c/docs/a%3Fb")
        );
        assert_eq!(
            moved("https://h:8081/dbs/d/colls/c/docs/a?b=c").as_deref(),
            Some("https://h:8081/dbs/d/colls/c/docs/a%3Fb=c")
        );
        for untouched in ["/dbs/d/colls/c/docs/a", "/_explorer/app.js?v=1", "/?x"] {
            assert_eq!(moved(untouched), None, "{untouched}");
        }
    }
}
