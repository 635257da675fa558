//! `/offers` and `/offers/{rid}`: the throughput of databases and containers
//! (see `store/offers.rs`). Signed with resource type `offers` and, for one
//! offer, its RID in lower case (`auth.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;

use super::request::{Body, CosmosHeaders, PathParams};
use super::response::{resource, value_feed, value_query, METADATA_READ, METADATA_WRITE};
use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::store::{Migration, Throughput};

/// The throughput a database or container create asks for, by its headers.
pub fn requested_throughput(headers: &HeaderMap) -> ApiResult<Option<Throughput>> {
    Throughput::from_headers(
        headers.text("x-ms-offer-throughput"),
        headers.text("x-ms-cosmos-offer-autopilot-settings"),
    )
}

/// A serverless account has no offers to read or replace: the service's 400.
fn offers_exist(state: &AppState) -> ApiResult<()> {
    match state.account.store.serverless() {
        true => Err(crate::store::serverless_offers()),
        false => Ok(()),
    }
}

pub async fn list(State(state): State<AppState>) -> ApiResult<Response> {
    offers_exist(&state)?;
    Ok(value_feed("", "Offers", &state.account.store.offers()))
}

/// `POST /offers` with a query, as the SDKs read a resource's throughput:
/// `SELECT * FROM root r WHERE r.resource = @link`.
pub async fn query(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    if !headers.is_query() {
        return Err(ApiError::bad_request(
            "Offers are created with their database or container (x-ms-offer-throughput or \
             x-ms-cosmos-offer-autopilot-settings); POST /offers only queries them, with \
             x-ms-documentdb-isquery: true.",
        ));
    }
    offers_exist(&state)?;
    let now = state.account.store.clock.now_millis();
    value_query(&body, now, "", "Offers", state.account.store.offers())
}

pub async fn read(
    State(state): State<AppState>,
    PathParams(rid): PathParams<String>,
) -> ApiResult<Response> {
    offers_exist(&state)?;
    let (offer, minimum) = state.account.store.offer(&rid)?;
    let mut response = resource(StatusCode::OK, &offer, METADATA_READ);
    response
        .headers_mut()
        .insert("x-ms-cosmos-min-throughput", HeaderValue::from(minimum));
    Ok(response)
}

/// A path under `/offers/` that is not one offer's RID (the JavaScript SDK
/// builds `offers/offers/{rid}/` when given an offer's `_self` for its id):
/// 400, as the service refuses a malformed offer link, rather than the
/// 404 of a path that names no resource.
pub async fn malformed(uri: axum::http::Uri) -> ApiError {
    ApiError::bad_request(format!(
        "The offer link '{}' is invalid: address an offer as /offers/{{rid}}, with the RID in \
         the offer's 'id' (or '_rid'), not its '_self'.",
        uri.path()
    ))
}

pub async fn replace(
    State(state): State<AppState>,
    PathParams(rid): PathParams<String>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    offers_exist(&state)?;
    let migration = match (
        headers.flag("x-ms-cosmos-migrate-offer-to-autopilot"),
        headers.flag("x-ms-cosmos-migrate-offer-to-manual-throughput"),
    ) {
        (false, false) => Migration::None,
        (true, false) => Migration::ToAutoscale,
        (false, true) => Migration::ToManual,
        (true, true) => {
            return Err(ApiError::bad_request(
                "Both x-ms-cosmos-migrate-offer-to-autopilot and \
                 x-ms-cosmos-migrate-offer-to-manual-throughput were sent: migrate one way at a time.",
            ))
        }
    };
    let replaced =
        state
            .account
            .store
            .replace_offer(&rid, &body.object()?, migration, headers.if_match())?;
    Ok(resource(StatusCode::OK, &replaced, METADATA_WRITE))
}
