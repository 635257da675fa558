//! Reading requests: the body extractor and the Cosmos request headers.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::header::AsHeaderName;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::operations::{body, RequestOption, RequestOptions};
use crate::protocol::error::{ApiError, ApiResult};

/// The raw request body; a body over the limit is a Cosmos 413, not axum's text.
pub struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status().as_u16() == 413 {
                    body::too_large(None)
                } else {
                    ApiError::bad_request(format!(
                        "The request body could not be read: {rejection}"
                    ))
                }
            })?;
        // The service measures the request's payload, as sent (escapes included).
        body::within_limit(&bytes)?;
        Ok(Body(bytes))
    }
}

impl Body {
    /// The body as a JSON object, or a 400 that says what is wrong.
    pub fn object(&self) -> ApiResult<Map<String, Value>> {
        body::object(&self.0)
    }

    /// The body as a typed request (query, patch), or a 400 naming the problem.
    pub fn typed<T: DeserializeOwned>(&self, what: &str) -> ApiResult<T> {
        body::typed(&self.0, what)
    }
}

/// The Cosmos request headers handlers read.
pub trait CosmosHeaders {
    /// By a `&str` name, or a parsed one from [`super::names`] on hot paths.
    fn text<K: AsHeaderName>(&self, name: K) -> Option<&str>;

    fn flag(&self, name: &str) -> bool {
        self.text(name)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    fn is_query(&self) -> bool {
        self.flag("x-ms-documentdb-isquery")
            // The Python SDK asks for a plan with neither of the others.
            || self.flag("x-ms-cosmos-is-query-plan-request")
            || self
                .text("content-type")
                .is_some_and(|c| c.starts_with("application/query+json"))
    }

    /// The number of the partition key range a request names
    /// (`x-ms-documentdb-partitionkeyrangeid`), if it names one.
    fn range_id(&self) -> Option<u32> {
        crate::data::store::parse_range_id(self.text(super::names::PARTITION_KEY_RANGE_ID)?)
    }
}

/// A request's options are its headers (`names::of_option`).
impl RequestOptions for HeaderMap {
    fn get(&self, option: RequestOption) -> Option<&str> {
        self.text(super::names::of_option(option))
    }
}

impl CosmosHeaders for HeaderMap {
    /// The header as text: UTF-8 is accepted beyond the visible ASCII that
    /// `to_str` allows, since a partition key header carries its JSON raw.
    fn text<K: AsHeaderName>(&self, name: K) -> Option<&str> {
        self.get(name)
            .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
    }
}

/// Path parameters, percent-decoded; a segment that is not valid UTF-8 once
/// decoded is a Cosmos 400, not axum's plain-text rejection.
pub struct PathParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(PathParams(value)),
            Err(rejection) => Err(ApiError::bad_request(format!(
                "The request path '{}' is invalid: {}. Percent-encode names as UTF-8.",
                parts.uri.path(),
                rejection.body_text()
            ))),
        }
    }
}
