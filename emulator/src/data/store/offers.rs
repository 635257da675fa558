//! The offer operations of the store: list, read and replace the
//! account's throughput offers (`offer.rs` says what an offer is and how a
//! replace is validated; databases and containers create and drop theirs,
//! `containers.rs`).

use serde_json::{Map, Value};

use super::checks::check_if_match;
use super::offer::Migration;
use super::Store;
use crate::protocol::error::ApiResult;

impl Store {
    /// Every offer, as served.
    pub fn offers(&self) -> Vec<Value> {
        self.read()
            .offers
            .iter()
            .map(|(_, offer)| offer.to_json())
            .collect()
    }

    /// One offer, with the least throughput it may be set to.
    pub fn offer(&self, rid: &str) -> ApiResult<(Value, u32)> {
        let catalog = self.read();
        let offer = catalog.offers.get(rid)?;
        Ok((offer.to_json(), offer.minimum_throughput()))
    }

    pub fn replace_offer(
        &self,
        rid: &str,
        body: &Map<String, Value>,
        migration: Migration,
        if_match: Option<&str>,
    ) -> ApiResult<Value> {
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let offer = catalog.offers.get_mut(rid)?;
        check_if_match(if_match, offer.etag())?;
        offer.replace(body, migration, now)?;
        let json = offer.to_json();
        catalog.meta_changed();
        drop(catalog);
        self.wrote();
        Ok(json)
    }
}
