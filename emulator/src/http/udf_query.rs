//! Queries that call user-defined functions. Their items are chosen under
//! the store's lock and copied out (the bytes are shared, not copied), then
//! the query runs outside the lock on a blocking thread that the scripts'
//! time bound answers: a UDF that loops, even inside a native call the
//! interrupt cannot stop, holds no lock and the request is answered 408.

use bytes::Bytes;

use super::items::{page_of, scoped_items, CalledUdfs, PageRequest};
use super::range_walk;
use super::AppState;
use crate::error::ApiResult;
use crate::query::retrieved::Retrieved;
use crate::query::{Page, PreparedQuery, Setting};
use crate::script::{run_bounded, Udfs};
use crate::store::ItemKey;

/// The container's RID, the page, the partition key index used and the
/// bytes retrieved (for the metrics).
pub(super) async fn page(
    state: &AppState,
    db: &str,
    coll: &str,
    query: &PreparedQuery,
    request: &PageRequest<'_>,
    (bodies, versions): CalledUdfs,
) -> ApiResult<(String, Page, Option<String>, Retrieved)> {
    let ((rid, items, walk, cache_key, query, policies), key_index) =
        state.store.with_container(db, coll, |c, now| {
            scoped_items(c, now, query, request, Some(&versions), |scoped| {
                let items: Vec<(ItemKey, Bytes)> = scoped
                    .items
                    .map(|(key, body)| (key.clone(), body.clone()))
                    .collect();
                let query = scoped.query.clone();
                let (walk, key, policies) = (scoped.walk, scoped.cache_key, scoped.policies);
                Ok((c.rid.clone(), items, walk, key, query, policies))
            })
        })?;
    let limits = state.scripts.limits;
    let (worker, continuation, limit) =
        (state.clone(), request.continuation.cloned(), request.limit);
    let (mut page, retrieved) = run_bounded(limits, move || {
        // The run's context is made on this thread, with the UDFs' runner
        // (an engine, which stays on the thread that made it).
        let setting = Setting {
            policies,
            udfs: Some(Box::new(Udfs::new(bodies, limits))),
        };
        let items = items.iter().map(|(key, body)| (key.pk(), key.id(), body));
        page_of(
            &worker,
            &query,
            setting,
            (items, None),
            cache_key,
            continuation.as_ref(),
            limit,
        )
    })
    .await?;
    if let Some(step) = walk {
        page.continuation = state.store.with_container(db, coll, |c, _| {
            Ok(range_walk::next(c, &step, page.continuation.take()))
        })?;
    }
    Ok((rid, page, key_index, retrieved))
}
