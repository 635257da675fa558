//! `POST .../docs` with `x-ms-documentdb-isquery: True`: a query of a
//! container's items, or its query plan; and the read feed's pages. This
//! module reads the request (its headers become a [`ScopeRequest`] and a
//! [`PageRequest`]) and writes the page, with the query metrics a client
//! asks for. The page itself is made below HTTP, in one call: the query
//! layer's pipeline (`query/run/pipeline.rs`) over the store's
//! [`Source`](crate::query::pipeline::Source) for the request's scope
//! (`store/query_source.rs`), with the scripts' runner for a query that
//! calls user-defined functions (`script/udf.rs`: its page runs off the
//! store's lock, on a thread the scripts' time bound answers, so a UDF
//! that loops holds no lock and the request is answered 408).

use bytes::Bytes;

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;

use super::container_context::{self, decorate, Refusal};
use super::metrics;
use super::request::{Body, CosmosHeaders};
use super::response::{feed, resource, METADATA_READ};
use super::AppState;
use crate::error::ApiResult;
use crate::query::pipeline::{self, PageRequest};
use crate::query::{Continuation, PageLimit, PreparedQuery, QueryBody};
use crate::script::UdfHost;
use crate::store::ScopeRequest;

/// A query of the container `db`/`coll` (the body), or its plan.
pub(super) async fn query(
    state: &AppState,
    (db, coll): (&str, &str),
    uri: &Uri,
    headers: &HeaderMap,
    body: &Body,
) -> Result<Response, Refusal> {
    let query = PreparedQuery::prepare_at(
        &body.typed::<QueryBody>("query")?,
        state.account.store.clock.now_millis(),
    )?;
    if headers.flag("x-ms-cosmos-is-query-plan-request") {
        // The container must exist for its plan, as for its query; a
        // vector search's order is its embedding policy's.
        let policies = state.account.store.search_policies(db, coll)?;
        let supported = headers.text("x-ms-cosmos-supported-query-features");
        query.check_supported_features(supported)?;
        let plan = query.plan_for(supported, &policies)?;
        return Ok(resource(StatusCode::OK, &plan, METADATA_READ));
    }
    let declared = headers.flag("x-ms-documentdb-query-enablecrosspartition");
    let scope = scope_request(headers);
    state
        .account
        .store
        .check_across_partitions((db, coll), &scope, &query, declared)?;
    let context = container_context::check(state, db, coll, headers, true)?;
    let source = std::str::from_utf8(&body.0).ok();
    let mut response = page(state, (db, coll), headers, &query, source, Priced::Query).await?;
    decorate(&mut response, &context, context.lsn, None, uri);
    Ok(response)
}

/// How a page is charged: as a query, or as a read feed (no query base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Priced {
    Query,
    ReadFeed,
}

/// One page of `query` as the response writes it: made below HTTP
/// (`pipeline::page`), which keeps a whole result between pages under
/// `source`, the query as sent (`query/results.rs`). Its charge follows
/// what it read and returned (`request_units`); the query metrics count
/// the same documents and bytes.
pub(super) async fn page(
    state: &AppState,
    (db, coll): (&str, &str),
    headers: &HeaderMap,
    query: &PreparedQuery,
    source: Option<&str>,
    priced: Priced,
) -> ApiResult<Response> {
    let started = metrics::wanted(headers).then(std::time::Instant::now);
    let limit = PageLimit::from_header(headers.max_item_count())?;
    let continuation = headers
        .continuation()
        .map(Continuation::parse)
        .transpose()?
        .flatten();
    let request = PageRequest {
        source,
        continuation: continuation.as_ref(),
        limit,
    };
    let source = state
        .account
        .store
        .query_source((db, coll), scope_request(headers));
    let host = UdfHost {
        limits: state.account.scripts.limits,
    };
    let answer = pipeline::page(
        &source,
        &host,
        query,
        &request,
        &state.account.query_results,
    )
    .await?;
    let token = answer.page.continuation.map(|c| c.to_token());
    let returned: usize = answer.page.documents.iter().map(Bytes::len).sum();
    let quorum = state.reads_quorum(headers);
    let charge = match priced {
        Priced::Query => state.account.charges.query(
            answer.retrieved.documents,
            answer.retrieved.bytes,
            returned,
            quorum,
        ),
        Priced::ReadFeed => {
            let count = answer.page.documents.len();
            state.account.charges.read_feed(count, returned, quorum)
        }
    };
    let mut response = feed(
        &answer.rid,
        "Documents",
        &answer.page.documents,
        token,
        charge,
    );
    if let Some(started) = started {
        let used = metrics::Used {
            documents: &answer.page.documents,
            retrieved: answer.retrieved,
            key_index: answer.key_index.as_deref(),
        };
        metrics::add(response.headers_mut(), headers, &used, started);
    }
    Ok(response)
}

/// The part of a container a request names, from its headers.
pub(super) fn scope_request(headers: &HeaderMap) -> ScopeRequest<'_> {
    ScopeRequest {
        partition_key: headers.partition_key(),
        range_id: headers.text("x-ms-documentdb-partitionkeyrangeid"),
        start_epk: headers.text("x-ms-start-epk"),
        end_epk: headers.text("x-ms-end-epk"),
    }
}
