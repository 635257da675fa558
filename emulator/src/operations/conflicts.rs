//! A container's conflicts: the feed, a query on it, one conflict. A
//! single-write-region emulator never has write conflicts, so the feed,
//! and any query on it, is empty; they are served so that the SDKs'
//! conflict APIs work as against a single-write-region account.

use super::options::{RequestOption, RequestOptions};
use super::paths::ConflictPath;
use super::response::Answer;
use super::{body, resources, ContainerPath, Serving};
use crate::data::query::{PreparedQuery, QueryBody};
use crate::protocol::error::{ApiError, ApiResult};

/// The feed envelope's key, as the service names it.
const FEED: &str = "Conflicts";

/// The container's RID, once it is known to exist.
fn container_rid(serving: &Serving<'_>, container: ContainerPath<'_>) -> ApiResult<String> {
    let store = &serving.account.store;
    let (found, _) = store.container(container.database, container.container)?;
    Ok(found["_rid"].as_str().unwrap_or("").to_string())
}

/// The conflicts feed: empty.
pub fn list(serving: &Serving<'_>, container: ContainerPath<'_>) -> Answer {
    let rid = container_rid(serving, container)?;
    Ok(resources::feed(&rid, FEED, &[]))
}

/// A POST to the conflicts feed that is not a query: conflicts are not
/// created by clients.
pub fn create(serving: &Serving<'_>, container: ContainerPath<'_>) -> Answer {
    container_rid(serving, container)?;
    Err(ApiError::bad_request(
        "Conflicts are recorded by the service, not created: POST to the conflicts feed only \
         queries it, with x-ms-documentdb-isquery: true.",
    )
    .into())
}

/// A query of the conflicts: validated as any query, then run over none.
pub fn query(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let rid = container_rid(serving, container)?;
    let store = &serving.account.store;
    let query = PreparedQuery::prepare_at(
        &body::typed::<QueryBody>(body, "query")?,
        store.clock.now_millis(),
    )?;
    // Across partitions only when the client says so, as for items.
    if options.partition_key().is_none()
        && options.range_id_text().is_none()
        && !options.flag(RequestOption::EnableCrossPartitionQuery)
    {
        let (db, coll) = (container.database, container.container);
        // The service refuses it as it refuses such a query of items.
        store.with_container(db, coll, |c, _| {
            crate::data::store::check_cross_partition_enabled(c.partition_key())
        })?;
    }
    let results = query.run_values(std::iter::empty())?;
    Ok(resources::feed(&rid, FEED, &results))
}

/// One conflict: there are none.
pub fn read(serving: &Serving<'_>, conflict: ConflictPath<'_>) -> Answer {
    let container = ContainerPath {
        database: conflict.database,
        container: conflict.container,
    };
    container_rid(serving, container)?;
    Err(ApiError::not_found()
        .with_message(format!(
            "Resource Not Found: the conflict '{}' does not exist; this emulator has one write \
             region and never records conflicts.",
            conflict.id
        ))
        .into())
}
