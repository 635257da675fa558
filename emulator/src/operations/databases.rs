//! The database operations: list, query, create (with the throughput it
//! asks for: `offers.rs`), read, delete. The store keeps databases
//! (`data/store/containers.rs`); their throughput is an offer.

use super::options::RequestOptions;
use super::paths::DatabasePath;
use super::response::Answer;
use super::{body, offers, resources, Serving};
use crate::data::store::Written;

/// The feed envelope's key, as the service names it.
const FEED: &str = "Databases";

/// Every database.
pub fn list(serving: &Serving<'_>) -> Answer {
    Ok(resources::feed(
        "",
        FEED,
        &serving.account.store.databases(),
    ))
}

/// A query over the databases.
pub fn query(serving: &Serving<'_>, body: &[u8]) -> Answer {
    let store = &serving.account.store;
    let now = store.clock.now_millis();
    Ok(resources::query(body, now, "", FEED, store.databases())?)
}

/// Creates a database, with throughput of its own when the request asks.
pub fn create(serving: &Serving<'_>, options: &dyn RequestOptions, body: &[u8]) -> Answer {
    let throughput = offers::requested_throughput(options)?;
    let created = serving
        .account
        .store
        .create_database(&body::object(body)?, throughput)?;
    Ok(resources::written(Written::Created, &created))
}

pub fn read(serving: &Serving<'_>, database: DatabasePath<'_>) -> Answer {
    let found = serving.account.store.database(database.database)?;
    Ok(resources::read(&found))
}

/// Deletes a database and everything in it.
pub fn delete(serving: &Serving<'_>, database: DatabasePath<'_>) -> Answer {
    serving.account.store.delete_database(database.database)?;
    resources::deleted()
}
