//! What a request to a container says about it, checked before the
//! operation runs: `x-ms-cosmos-intended-collection-rid` (a client holding
//! a dropped container's RID) and the session token (a state the client
//! has seen); and the session token's LSN for a range.
//!
//! The session token is the service's `{pkRangeId}:{version}#{globalLsn}`:
//! the range of the item (of the range a feed read; `0` otherwise), version
//! `-1`, with the LSN of the partition, as on the service: the range's LSN
//! (`data/store/range_lsns.rs`), the `lsn` header's and the items' `_lsn`; in a
//! lagging read region, the LSN its replica has applied. The Java change
//! feed estimator subtracts a pending item's `_lsn` from it. Other answers
//! (databases, containers, the account) carry none.

use super::options::RequestOptions;
use super::response::{Refusal, Response};
use super::Serving;
use crate::data::store::ContainerContext;
use crate::protocol::error::{ApiError, ApiResult};

/// Substatus of a request naming a container by a RID it no longer has.
const COLLECTION_RID_MISMATCH: u32 = 1024;
/// Substatus of a read asking for a state the replica has not reached.
const READ_SESSION_NOT_AVAILABLE: u32 = 1002;

/// The addressed container, once the request's intended RID and session
/// token hold against it; otherwise the service's refusal. Reads pass
/// `read = true`: only they honour a session token (a write always acts on
/// the latest state).
pub fn check(
    at: &Serving<'_>,
    db: &str,
    coll: &str,
    options: &dyn RequestOptions,
    read: bool,
) -> Result<ContainerContext, Refusal> {
    // A read's range (its session token's, its answer's); a write's is
    // its item's, which the operation names once it is written.
    let store = &at.account.store;
    let context = match read {
        true => store.container_context_at(
            db,
            coll,
            options.partition_key(),
            options.range_id_text(),
        )?,
        false => store.container_context(db, coll)?,
    };
    verify(at, &context, options, read)?;
    Ok(context)
}

/// [`check`] of a context the caller already holds (a point read takes it
/// under the lock of the read itself).
pub fn verify(
    at: &Serving<'_>,
    context: &ContainerContext,
    options: &dyn RequestOptions,
    read: bool,
) -> Result<(), Refusal> {
    if let Some(intended) = options.intended_collection_rid() {
        if intended.as_bytes() != &context.owner.rid[..] {
            // The SDKs refresh their container cache on 400/1024 and retry.
            return Err(ApiError::bad_request(
                "Collection rid provided by the user does not match the existing collection.",
            )
            .with_substatus(COLLECTION_RID_MISMATCH)
            .into());
        }
    }
    if !read {
        return Ok(());
    }
    let Some(token) = options.session_token() else {
        return Ok(());
    };
    // A token naming an LSN the container never reached, but that some
    // container of the account has, was another container's: the Python
    // SDK keeps the tokens of every container it first wrote with
    // `no_response_on_write` under one key, the JavaScript SDK a dropped
    // container's under its name. It asks for no more than this container
    // committed. A token beyond anything the account wrote names a state
    // that is not there.
    let account = at.account;
    let named = session_lsn(token, context.range)?;
    let seen = if named <= account.store.session_lsn() {
        named.min(context.lsn)
    } else {
        named
    };
    // A lagging region's replica has not reached what the container has.
    let visible =
        account.visible_range_lsn(at.region, &context.owner.rid, context.range, context.lsn);
    if seen > visible {
        // The SDKs clear the session (keyed by the owner path) and retry.
        let refusal: Response = ApiError::not_found()
            .with_message("The read session is not available for the input session token.")
            .with_substatus(READ_SESSION_NOT_AVAILABLE)
            .into();
        let refusal = refusal.naming(context);
        return Err(Refusal(Box::new(refusal)));
    }
    Ok(())
}

/// The global LSN a session token names for the range `range`: `0:-1#12`,
/// or several ranges `0:-1#12,1:-1#7`, each maybe with regional progress
/// `#1=5`. LSNs are per range: the segment of `range` if the token has one;
/// otherwise (a parent's token after a split, or one of another range) the
/// highest it names, which the caller caps at what the account committed.
pub fn session_lsn(token: &str, range: u32) -> ApiResult<u64> {
    let invalid = || {
        ApiError::bad_request(format!(
            "The session token provided '{token}' is invalid. A session token looks like \
             '0:-1#12' ({{partition key range}}:{{version}}#{{LSN}}): send back one this emulator gave."
        ))
    };
    let mut highest = 0;
    let mut own = None;
    for pair in token.split(',') {
        let (named_range, vector) = pair.split_once(':').ok_or_else(invalid)?;
        let mut segments = vector.split('#');
        let _version: i64 = segments
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(invalid)?;
        let lsn: u64 = segments
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(invalid)?;
        highest = highest.max(lsn);
        if crate::data::store::parse_range_id(named_range) == Some(range) {
            own = Some(own.unwrap_or(0).max(lsn));
        }
    }
    Ok(own.unwrap_or(highest))
}

/// A session token as the service writes it, `{range}:-1#{lsn}`, on the
/// stack: a front door copies it once into its header or token.
pub struct SessionToken {
    /// A range (10 digits at most), `:-1#`, an LSN (20 at most).
    text: [u8; 34],
    len: usize,
}

impl SessionToken {
    pub fn as_bytes(&self) -> &[u8] {
        &self.text[..self.len]
    }
}

/// The session token of an answer naming the range `range` of the
/// container `rid` (none: an answer about no container) at its range's
/// LSN `lsn`: that LSN as far as the region serving it has applied it (a
/// lagging replica's tokens must not name writes it has not applied).
pub fn token(serving: &Serving<'_>, rid: Option<&[u8]>, range: u32, lsn: u64) -> SessionToken {
    let lsn = match rid {
        Some(rid) => serving
            .account
            .visible_range_lsn(serving.region, rid, range, lsn),
        None => lsn,
    };
    // `{range}:-1#{lsn}`, without the formatting machinery (every answer
    // about a container carries one).
    let mut text = [0u8; 34];
    let mut len = decimal(u64::from(range), &mut text);
    text[len..len + 4].copy_from_slice(b":-1#");
    len += 4;
    len += decimal(lsn, &mut text[len..]);
    SessionToken { text, len }
}

/// Writes `n` in decimal at the start of `out`; how many digits it took.
fn decimal(mut n: u64, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let written = digits.len() - start;
    out[..written].copy_from_slice(&digits[start..]);
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_tokens_as_the_service_writes_them() {
        let account = crate::account::Account::new(
            crate::data::store::Store::new(crate::data::clock::Clock::new(
                crate::data::clock::ClockMode::Manual { start: None },
            )),
            crate::protocol::auth::MasterKey::from_base64(crate::protocol::auth::WELL_KNOWN_KEY)
                .unwrap(),
            "Region",
        );
        let serving = Serving::new(&account, 0);
        let text = |rid, range, lsn| {
            String::from_utf8(token(&serving, rid, range, lsn).as_bytes().to_vec()).unwrap()
        };
        assert_eq!(text(None, 0, 12), "0:-1#12");
        assert_eq!(
            text(Some(b"rid"), 3, 7),
            "3:-1#7",
            "one region: all applied"
        );
        assert_eq!(
            text(None, u32::MAX, u64::MAX),
            format!("{}:-1#{}", u32::MAX, u64::MAX)
        );
    }

    #[test]
    fn session_tokens_as_the_sdks_send_them() {
        assert_eq!(session_lsn("0:-1#12", 0).unwrap(), 12);
        // Each range's own LSN; the highest for a range the token omits.
        assert_eq!(session_lsn("0:-1#12,1:-1#40", 0).unwrap(), 12);
        assert_eq!(session_lsn("0:-1#12,1:-1#40", 1).unwrap(), 40);
        assert_eq!(session_lsn("0:-1#12,1:-1#40", 5).unwrap(), 40);
        assert_eq!(session_lsn("0:0#7#1=5#2=9", 0).unwrap(), 7);
        for bad in ["12", "0:12", "0:-1#x", "0:a#1", ""] {
            let error = session_lsn(bad, 0).unwrap_err();
            assert_eq!(error.status, 400, "{bad}");
        }
    }
}
