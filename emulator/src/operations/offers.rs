//! The offer operations: the throughput of databases and containers (see
//! `data/store/offers.rs`): list, query, read, replace (with a migration
//! between manual and autoscale throughput). Offers are created with their
//! database or container ([`requested_throughput`]); a serverless account
//! has none.

use super::options::{RequestOption, RequestOptions};
use super::response::Answer;
use super::{body, resources, Serving};
use crate::data::store::{Migration, Throughput};
use crate::protocol::error::{ApiError, ApiResult};

/// The feed envelope's key, as the service names it.
const FEED: &str = "Offers";

/// The throughput a database or container create asks for.
pub fn requested_throughput(options: &dyn RequestOptions) -> ApiResult<Option<Throughput>> {
    Throughput::from_headers(
        options.get(RequestOption::OfferThroughput),
        options.get(RequestOption::AutoscaleSettings),
    )
}

/// A serverless account has no offers to read or replace: the service's 400.
fn offers_exist(serving: &Serving<'_>) -> ApiResult<()> {
    match serving.account.store.serverless() {
        true => Err(crate::data::store::serverless_offers()),
        false => Ok(()),
    }
}

/// Every offer.
pub fn list(serving: &Serving<'_>) -> Answer {
    offers_exist(serving)?;
    Ok(resources::feed("", FEED, &serving.account.store.offers()))
}

/// A query over the offers, as the SDKs read a resource's throughput:
/// `SELECT * FROM root r WHERE r.resource = @link`.
pub fn query(serving: &Serving<'_>, body: &[u8]) -> Answer {
    offers_exist(serving)?;
    let store = &serving.account.store;
    let now = store.clock.now_millis();
    Ok(resources::query(body, now, "", FEED, store.offers())?)
}

/// A POST of an offer that is not a query: offers are not created alone.
pub fn create() -> Answer {
    Err(ApiError::bad_request(
        "Offers are created with their database or container (x-ms-offer-throughput or \
         x-ms-cosmos-offer-autopilot-settings); POST /offers only queries them, with \
         x-ms-documentdb-isquery: true.",
    )
    .into())
}

/// An offer, by its RID, with the least throughput it may be set to.
pub fn read(serving: &Serving<'_>, rid: &str) -> Answer {
    offers_exist(serving)?;
    let (offer, minimum) = serving.account.store.offer(rid)?;
    let mut response = resources::read(&offer);
    response.headers.min_throughput = Some(minimum);
    Ok(response)
}

/// An address under an offer's that is not one offer's RID (the
/// JavaScript SDK builds `offers/offers/{rid}/` when given an offer's
/// `_self` for its id): 400, as the service refuses a malformed offer
/// link, rather than the 404 of an address that names no resource.
pub fn malformed(link: &str) -> Answer {
    Err(ApiError::bad_request(format!(
        "The offer link '{link}' is invalid: address an offer as /offers/{{rid}}, with the RID in \
         the offer's 'id' (or '_rid'), not its '_self'."
    ))
    .into())
}

/// Replaces an offer's throughput, or migrates it between manual and
/// autoscale throughput.
pub fn replace(
    serving: &Serving<'_>,
    rid: &str,
    options: &dyn RequestOptions,
    body: &[u8],
) -> Answer {
    offers_exist(serving)?;
    let migration = match (
        options.flag(RequestOption::MigrateToAutoscale),
        options.flag(RequestOption::MigrateToManual),
    ) {
        (false, false) => Migration::None,
        (true, false) => Migration::ToAutoscale,
        (false, true) => Migration::ToManual,
        (true, true) => {
            return Err(ApiError::bad_request(
                "Both x-ms-cosmos-migrate-offer-to-autopilot and \
                 x-ms-cosmos-migrate-offer-to-manual-throughput were sent: migrate one way at a time.",
            )
            .into())
        }
    };
    let replaced = serving.account.store.replace_offer(
        rid,
        &body::object(body)?,
        migration,
        options.if_match(),
    )?;
    Ok(resources::replaced(&replaced))
}
