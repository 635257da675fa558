//! The container operations: list, query, create (with the throughput it
//! asks for: `offers.rs`), read (with the quota and usage the service
//! states, and on request the partitions' statistics), replace, delete.

use super::options::{RequestOption, RequestOptions};
use super::paths::DatabasePath;
use super::response::Answer;
use super::{body, offers, resources, scripts, ContainerPath, Serving};
use crate::data::store::Written;
use crate::protocol::error::ApiResult;

/// The feed envelope's key, as the service names it.
const FEED: &str = "DocumentCollections";

/// The service's quotas of a container, as its reads state them (sizes
/// in KB; `-1`: no limit).
pub const QUOTA: &str = "functions=25;storedProcedures=100;triggers=25;documentSize=10240;\
                         documentsSize=10485760;documentsCount=-1;collectionSize=10485760;";

/// The database's RID, once it is known to exist.
fn database_rid(serving: &Serving<'_>, database: &str) -> ApiResult<String> {
    let found = serving.account.store.database(database)?;
    Ok(found["_rid"].as_str().unwrap_or("").to_string())
}

/// Every container of a database.
pub fn list(serving: &Serving<'_>, database: DatabasePath<'_>) -> Answer {
    let rid = database_rid(serving, database.database)?;
    let containers = serving.account.store.containers(database.database)?;
    Ok(resources::feed(&rid, FEED, &containers))
}

/// A query over a database's containers.
pub fn query(serving: &Serving<'_>, database: DatabasePath<'_>, body: &[u8]) -> Answer {
    let rid = database_rid(serving, database.database)?;
    let store = &serving.account.store;
    let now = store.clock.now_millis();
    let containers = store.containers(database.database)?;
    Ok(resources::query(body, now, &rid, FEED, containers)?)
}

/// Creates a container, with throughput of its own when the request asks.
pub fn create(
    serving: &Serving<'_>,
    database: DatabasePath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let throughput = offers::requested_throughput(options)?;
    let created = serving.account.store.create_container(
        database.database,
        &body::object(body)?,
        throughput,
    )?;
    Ok(resources::written(Written::Created, &created))
}

/// A container, with the service's quota and usage: the count of its
/// items always, its sizes only when asked for (they take a pass over the
/// items: `x-ms-documentdb-populatequotainfo`, Python's
/// `populate_quota_info`, JavaScript's `populateQuotaInfo`), and then also
/// how far a new indexing policy's rebuild has come (`reindex.rs`).
pub fn read(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let store = &serving.account.store;
    let (db, coll) = (container.database, container.container);
    let (mut found, live_items) = store.container(db, coll)?;
    if options.flag(RequestOption::PopulatePartitionStatistics) {
        found["statistics"] = store.partition_statistics(db, coll)?.into();
    }
    let mut response = resources::read(&found);
    let quota = options.flag(RequestOption::PopulateQuotaInfo);
    let usage = if quota {
        let kb = store.live_bytes(db, coll)?.div_ceil(1024);
        let scripts = scripts::usage(store.script_counts(db, coll)?);
        format!(
            "{scripts}documentSize={kb};documentsSize={kb};documentsCount={live_items};\
             collectionSize={kb};"
        )
    } else {
        format!("documentsCount={live_items};")
    };
    let headers = &mut response.headers;
    headers.resource_quota = Some(QUOTA);
    headers.resource_usage = Some(usage);
    if quota {
        headers.index_transformation_progress =
            Some(store.index_transformation_progress(db, coll)?);
    }
    Ok(response)
}

/// Replaces a container's settings (those that may change).
pub fn replace(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    let replaced = serving.account.store.replace_container(
        container.database,
        container.container,
        &body::object(body)?,
        options.if_match(),
    )?;
    Ok(resources::replaced(&replaced))
}

/// Deletes a container and its items.
pub fn delete(serving: &Serving<'_>, container: ContainerPath<'_>) -> Answer {
    let (db, coll) = (container.database, container.container);
    serving.account.store.delete_container(db, coll)?;
    resources::deleted()
}
