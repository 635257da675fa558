//! A query of a container's items, its query plan, and the read feed: each
//! answers one page. The page is made below this, in one call: the query
//! layer's pipeline (`data/query/run/pipeline.rs`) over the store's
//! [`Source`](crate::data::query::pipeline::Source) for the request's scope
//! (`data/store/query_source.rs`), with the scripts' runner for a query that
//! calls user-defined functions (`data/script/udf.rs`: its page runs off the
//! store's lock, on a thread the scripts' time bound answers, so a UDF
//! that loops holds no lock and the request is answered 408). Here: the
//! checks before it (the container, the session, a query across
//! partitions), the continuation and the page limit, the charge (a query's
//! or a read feed's) and the query metrics a client asks for
//! (`query_metrics.rs`).

use std::sync::LazyLock;

use bytes::Bytes;

use super::options::{RequestOption, RequestOptions};
use super::response::{Answer, Response};
use super::{body, query_metrics, session, ContainerPath, Serving};
use crate::data::query::pipeline::{self, PageRequest};
use crate::data::query::{Continuation, PageLimit, PreparedQuery, QueryBody};
use crate::data::script::UdfHost;
use crate::data::store::ScopeRequest;
use crate::protocol::error::{ApiResult, Status};
use crate::protocol::request_units::METADATA_READ;

/// The query `body` of a container's items: one page of it.
pub async fn query(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let account = serving.account;
    let ContainerPath {
        database: db,
        container: coll,
    } = container;
    let query = prepare(serving, body)?;
    let declared = options.flag(RequestOption::EnableCrossPartitionQuery);
    account
        .store
        .check_across_partitions((db, coll), &scope_request(options), &query, declared)?;
    let context = session::check(serving, db, coll, options, true)?;
    let source = std::str::from_utf8(body).ok();
    let response = page(serving, container, options, &query, source, Priced::Query).await?;
    Ok(response.about(&context, context.lsn, None))
}

/// The plan of the query `body` (what the SDKs' pipelines ask for before
/// a query across partitions): the container must exist for it, as for the
/// query; a vector search's order is its embedding policy's.
pub fn plan(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let query = prepare(serving, body)?;
    let policies = serving
        .account
        .store
        .search_policies(container.database, container.container)?;
    let supported = options.get(RequestOption::SupportedQueryFeatures);
    query.check_supported_features(supported)?;
    let plan = query.plan_for(supported, &policies)?;
    Ok(Response::resource(Status::OK, &plan, METADATA_READ))
}

/// The read feed: every live item of a container, paged, as `SELECT * FROM
/// c` would give, priced as a feed.
pub async fn read_feed(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let (db, coll) = (container.database, container.container);
    let context = session::check(serving, db, coll, options, true)?;
    // Prepared once: SDKs read feeds (and poll them) often.
    static ALL: LazyLock<PreparedQuery> = LazyLock::new(|| {
        PreparedQuery::prepare(&QueryBody {
            query: "SELECT * FROM c".into(),
            parameters: Vec::new(),
        })
        .expect("a valid query")
    });
    let response = page(serving, container, options, &ALL, None, Priced::ReadFeed).await?;
    Ok(response.about(&context, context.lsn, None))
}

/// The query of a request's body, prepared at the account's clock.
fn prepare(serving: &Serving<'_>, body: &[u8]) -> ApiResult<PreparedQuery> {
    let now = serving.account.store.clock.now_millis();
    PreparedQuery::prepare_at(&body::typed::<QueryBody>(body, "query")?, now)
}

/// How a page is charged: as a query, or as a read feed (no query base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priced {
    Query,
    ReadFeed,
}

/// One page of `query`: made by the pipeline (`pipeline::page`), which
/// keeps a whole result between pages under `source`, the query as sent
/// (`data/query/results.rs`). Its charge follows what it read and returned
/// (`request_units`); the query metrics count the same documents and
/// bytes.
pub async fn page(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    query: &PreparedQuery,
    source: Option<&str>,
    priced: Priced,
) -> ApiResult<Response> {
    let account = serving.account;
    let started = query_metrics::wanted(options).then(std::time::Instant::now);
    let limit = PageLimit::from_header(options.max_item_count())?;
    let continuation = options
        .continuation()
        .map(Continuation::parse)
        .transpose()?
        .flatten();
    let request = PageRequest {
        source,
        continuation: continuation.as_ref(),
        limit,
    };
    let names = (container.database, container.container);
    let source = account.store.query_source(names, scope_request(options));
    let host = UdfHost {
        limits: account.scripts.limits,
    };
    let answer = pipeline::page(&source, &host, query, &request, &account.query_results).await?;
    let token = answer.page.continuation.map(|c| c.to_token());
    let returned: usize = answer.page.documents.iter().map(Bytes::len).sum();
    let quorum = account.reads_quorum(|| options.consistency_level());
    let charge = match priced {
        Priced::Query => account.charges.query(
            answer.retrieved.documents,
            answer.retrieved.bytes,
            returned,
            quorum,
        ),
        Priced::ReadFeed => {
            let count = answer.page.documents.len();
            account.charges.read_feed(count, returned, quorum)
        }
    };
    let mut response = Response::feed(
        &answer.rid,
        "Documents",
        &answer.page.documents,
        token,
        charge,
    );
    if let Some(started) = started {
        let used = query_metrics::Used {
            documents: &answer.page.documents,
            retrieved: answer.retrieved,
            key_index: answer.key_index.as_deref(),
        };
        query_metrics::add(&mut response.headers, options, &used, started);
    }
    Ok(response)
}

/// The part of a container a request names, from its options.
pub fn scope_request(options: &dyn RequestOptions) -> ScopeRequest<'_> {
    ScopeRequest {
        partition_key: options.partition_key(),
        range_id: options.range_id_text(),
        start_epk: options.get(RequestOption::StartEpk),
        end_epk: options.get(RequestOption::EndEpk),
    }
}
