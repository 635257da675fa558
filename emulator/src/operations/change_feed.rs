//! The change feed: a read of a container's items with a change feed mode
//! (HTTP: `GET .../docs` with `A-IM`; see
//! `docs/src/reference/protocol.md#change-feed-latest-version` and
//! `docs/src/reference/protocol.md#change-feed-all-versions-and-deletes`).
//! The options below are named by their HTTP headers; the operation reads
//! them by meaning ([`RequestOption`]).
//!
//! - `A-IM: Incremental Feed` (any case): the latest version of each live
//!   item changed after the start, in the order of its last write, each
//!   with `_lsn`. Deletes and expired items never appear. With
//!   `x-ms-cosmos-changefeed-wire-format-version: 2021-09-15` (the Java
//!   SDK's `handleLatestVersionChanges` processor, the Rust SDK) each item
//!   comes wrapped as `{"current": item, "metadata": {"lsn", "crts"}}`.
//! - `A-IM: Full-Fidelity Feed` with
//!   `x-ms-cosmos-changefeed-wire-format-version: 2021-09-15`: every create,
//!   replace and delete in the container's change log after the start, TTL
//!   purges as deletes with `timeToLiveExpired: true` (deletes carry the
//!   item's id and partition key, not its last image).
//!
//! The start is the beginning (no `If-None-Match`; latest version only),
//! now (`If-None-Match: *`), a continuation (`If-None-Match: <etag>`, the
//! `etag` of the previous answer: an LSN) or a point in time
//! (`If-Modified-Since`, latest version only). Every answer carries `etag`;
//! an answer with nothing new is 304 with an empty body. A feed is scoped to
//! a partition key (or a hierarchical key's prefix) by
//! `x-ms-documentdb-partitionkey`, or to a range of effective partition keys
//! by `x-ms-start-epk`/`x-ms-end-epk` (as the Python SDK sends a partition
//! key or a feed range); see `scope.rs`.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{json, Value};

use super::options::{RequestOption, RequestOptions};
use super::response::{Answer, Response, ResponseEtag};
use super::{query, session, ContainerPath, Serving};
use crate::data::query::PageLimit;
use crate::data::store::{Change, ChangeKind, Container, FeedPosition, FeedScope, Item, Range};
use crate::protocol::error::{ApiError, ApiResult, Status};
use crate::protocol::partition_key::KeyScope;
use crate::protocol::request_units::Charge;

/// The change feed's wire format that wraps each change as `current` and
/// `metadata`: required by the all-versions-and-deletes mode, optional in
/// the latest-version mode.
const WIRE_FORMAT: &str = "2021-09-15";
/// Its header, as the refusals name it.
const WIRE_FORMAT_HEADER: &str = "x-ms-cosmos-changefeed-wire-format-version";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Bare items (no wire-format header) or, with `wrapped`, each as
    /// `{"current", "metadata"}`.
    LatestVersion {
        wrapped: bool,
    },
    AllVersionsAndDeletes,
}

/// Where a read starts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Start {
    Beginning,
    Now,
    /// After this position (an earlier answer's etag).
    After(FeedPosition),
}

/// An If-Modified-Since date: RFC 1123 in GMT, or in UTC as Go's
/// `time.RFC1123` writes it (the Go SDK's `StartFrom`), which the service
/// reads as the same instant.
fn if_modified_since(text: &str) -> Result<std::time::SystemTime, httpdate::Error> {
    match text.trim_end().strip_suffix(" UTC") {
        Some(date) => httpdate::parse_http_date(&format!("{date} GMT")),
        None => httpdate::parse_http_date(text),
    }
}

/// A page of a container's change feed (a read: the stale-container and
/// session checks hold, and the answer names its container, as any
/// feed's): 200 with the changes, or 304 with none, each with the etag to
/// continue from.
pub fn read(
    serving: &Serving<'_>,
    container: ContainerPath<'_>,
    options: &dyn RequestOptions,
) -> Answer {
    let (db, coll) = (container.database, container.container);
    let context = session::check(serving, db, coll, options, true)?;
    let response = changes(serving, db, coll, options)?;
    Ok(response.about(&context, context.lsn, None))
}

fn changes(
    serving: &Serving<'_>,
    db: &str,
    coll: &str,
    options: &dyn RequestOptions,
) -> ApiResult<Response> {
    let account = serving.account;
    let mode = mode(options)?;
    let start = match options.if_none_match().map(str::trim) {
        None => Start::Beginning,
        Some("*") => Start::Now,
        Some(token) => Start::After(parse_token(token)?),
    };
    let since = options
        .get(RequestOption::IfModifiedSince)
        .map(|text| {
            if_modified_since(text)
                .map(|t| {
                    t.duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs() as i64)
                })
                .map_err(|_| {
                    ApiError::bad_request(format!(
                        "The If-Modified-Since header '{text}' is not an RFC 1123 date, e.g. 'Tue, 01 Nov 2022 10:00:00 GMT'."
                    ))
                })
        })
        .transpose()?;
    if mode == Mode::AllVersionsAndDeletes && (start == Start::Beginning || since.is_some()) {
        return Err(ApiError::bad_request(
            "The all versions and deletes change feed mode reads from now or from a continuation \
             only: send If-None-Match: * or the etag of a previous answer (starting from the \
             beginning or from a point in time is not supported in this mode). You must read \
             the change feed from within the retention period.",
        ));
    }
    let limit = PageLimit::from_header(options.max_item_count())?;
    account.store.with_container(db, coll, |c, now| {
        // A partition key (or a hierarchical prefix), or a feed range as a
        // range of effective partition keys within the range id's range.
        let mut scope = FeedScope::new(c, &query::scope_request(options))?;
        // LSNs are per range: the reader continues in each range of its
        // scope past that range's LSN, and the log is read from a place
        // before every one of them.
        let cursor = cursor(ranges_in_scope(c, &scope), &start)?;
        let from = cursor
            .iter()
            .map(|(range, after)| range.lsns.log_position_after(*after))
            .min()
            .unwrap_or(0);
        let mut index_of = range_index(c, &cursor);
        let page = match mode {
            Mode::LatestVersion { wrapped } => {
                let changes = c
                    .latest_changes(from, now)
                    .filter(|(key, item)| {
                        scope.contains(key.pk()) && since.is_none_or(|t| item.ts >= t)
                    })
                    .filter_map(|(key, item)| {
                        let index = index_of(key.pk())?;
                        (item.range_lsn > cursor[index].1).then(|| {
                            let document = if wrapped {
                                latest_version_wrapped(item)
                            } else {
                                item.with_lsn()
                            };
                            (item.lsn, index, item.range_lsn, document)
                        })
                    });
                page(changes, limit.items, cursor.len())
            }
            Mode::AllVersionsAndDeletes => {
                for (range, after) in &cursor {
                    if *after < range.lsns.dropped() {
                        return Err(ApiError::bad_request(format!(
                            "The continuation asks for changes of the partition key range {} \
                             from LSN {} on, but its change log now starts after LSN {}: \
                             changes older than the retention (--change-feed-retention), or \
                             past the log's bound of {} MB of versions, are gone. Start again \
                             from now.",
                            range.id,
                            after + 1,
                            range.lsns.dropped(),
                            crate::protocol::limits::MAX_CHANGE_LOG_BYTES / (1024 * 1024)
                        )));
                    }
                }
                // What the log dropped is before every range's continuation.
                let log = c.log().retained_after(from);
                let changes = log
                    .filter(|change| scope.contains(change.key.pk()))
                    .filter_map(|change| {
                        let index = index_of(change.key.pk())?;
                        (change.range_lsn > cursor[index].1).then(|| {
                            let document = full_fidelity(c, change);
                            (change.lsn, index, change.range_lsn, document)
                        })
                    });
                page(changes, limit.items, cursor.len())
            }
        };
        // Each range continues past its last change on a full page;
        // otherwise the reader is up to date with each range.
        let full = page.documents.len() >= limit.items;
        let positions: Vec<(u32, u64)> = cursor
            .iter()
            .zip(&page.last)
            .map(|((range, after), last)| {
                let lsn = match (full, last) {
                    (true, Some(lsn)) => *lsn,
                    (true, None) => *after,
                    (false, _) => range.lsns.last().max(*after),
                };
                (range.id, lsn)
            })
            .collect();
        let etag = FeedPosition::etag(&positions);
        let documents = page.documents;
        let bytes = documents.iter().map(Bytes::len).sum();
        let quorum = account.reads_quorum(|| options.consistency_level());
        let charge = account.charges.change_feed(documents.len(), bytes, quorum);
        Ok(answer(&c.rid, &documents, &etag, charge))
    })
}

/// The ranges a feed reads: the one it names, the one of its partition
/// key, or every range its scope (a hierarchical prefix, a range of EPKs,
/// nothing) reaches.
fn ranges_in_scope<'c>(c: &'c Container, scope: &FeedScope<'c>) -> Vec<&'c Range> {
    let ranges = c.ranges();
    if let Some(range) = scope.range {
        return vec![range];
    }
    if let [only] = ranges.ranges() {
        return vec![only];
    }
    if let Some(KeyScope::Exact(pk)) = &scope.key {
        return vec![ranges.range_of(&c.epk(pk))];
    }
    ranges
        .ranges()
        .iter()
        .filter(|range| scope.epk.overlaps(&range.min, &range.max))
        .collect()
}

/// Each range of the feed with the range LSN it continues past.
fn cursor<'c>(ranges: Vec<&'c Range>, start: &Start) -> ApiResult<Vec<(&'c Range, u64)>> {
    ranges
        .into_iter()
        .map(|range| {
            let after = match start {
                Start::Beginning => 0,
                Start::Now => range.lsns.last(),
                Start::After(position) => position.after(range).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "Invalid Continuation Token: it names no position in the partition key \
                         range {} (nor in a range it was split from): send the etag of an \
                         answer of this feed.",
                        range.id
                    ))
                })?,
            };
            Ok((range, after))
        })
        .collect()
}

/// The index in `cursor` of the range holding the canonical partition key
/// `pk` (none: outside the feed's ranges). With one range, no hashing;
/// otherwise each partition is hashed once per request.
fn range_index<'c>(
    c: &'c Container,
    cursor: &[(&Range, u64)],
) -> impl FnMut(&str) -> Option<usize> + 'c {
    let ids: Vec<u32> = cursor.iter().map(|(range, _)| range.id).collect();
    let mut known: HashMap<Box<str>, Option<usize>> = HashMap::new();
    move |pk: &str| {
        if ids.len() == 1 {
            return Some(0);
        }
        if let Some(index) = known.get(pk) {
            return *index;
        }
        let id = c.range_of(pk);
        let index = ids.iter().position(|r| *r == id);
        known.insert(pk.into(), index);
        index
    }
}

fn mode(options: &dyn RequestOptions) -> ApiResult<Mode> {
    let a_im = options
        .get(RequestOption::ChangeFeedMode)
        .unwrap_or_default()
        .trim();
    let wire_format = options
        .get(RequestOption::ChangeFeedWireFormat)
        .map(str::trim);
    // A wire format the emulator does not know is refused in either mode:
    // serving bare items to a client that asked for another shape would
    // hand it changes it cannot read (an SDK sees no `current`).
    if let Some(other) = wire_format.filter(|v| *v != WIRE_FORMAT) {
        return Err(ApiError::bad_request(format!(
            "The change feed wire format '{other}' ({WIRE_FORMAT_HEADER}) is not supported: \
             send {WIRE_FORMAT}, or no such header for the latest version's bare items."
        )));
    }
    if a_im.eq_ignore_ascii_case("Incremental Feed") {
        return Ok(Mode::LatestVersion {
            wrapped: wire_format.is_some(),
        });
    }
    if a_im.eq_ignore_ascii_case("Full-Fidelity Feed") {
        return match wire_format {
            Some(_) => Ok(Mode::AllVersionsAndDeletes),
            None => Err(ApiError::bad_request(format!(
                "The all versions and deletes change feed needs the header \
                 {WIRE_FORMAT_HEADER}: {WIRE_FORMAT} (got none)"
            ))),
        };
    }
    Err(ApiError::bad_request(format!(
        "The A-IM header '{a_im}' is not a change feed mode: send 'Incremental Feed' (latest \
         version) or 'Full-Fidelity Feed' (all versions and deletes)."
    )))
}

/// A continuation: the `etag` of an earlier answer, quoted or not.
fn parse_token(token: &str) -> ApiResult<FeedPosition> {
    FeedPosition::parse(token).ok_or_else(|| {
        ApiError::bad_request(format!(
            "Invalid Continuation Token: '{token}' is not the etag of a change feed answer."
        ))
    })
}

/// A page of changes, and the range LSN of the last change of each range
/// (by its index in the feed's cursor) it holds.
struct Page {
    documents: Vec<Bytes>,
    last: Vec<Option<u64>>,
}

/// Up to `limit` changes, each `(log LSN, range index, range LSN, document)`
/// in log order. A page never ends inside a transactional batch (several
/// changes under one LSN): it takes the rest of the batch past `limit`,
/// since the continuation is an LSN and the next page starts after it.
fn page(
    changes: impl Iterator<Item = (u64, usize, u64, Bytes)>,
    limit: usize,
    ranges: usize,
) -> Page {
    let mut page = Page {
        documents: Vec::new(),
        last: vec![None; ranges],
    };
    let mut last_log = None;
    for (log, index, lsn, document) in changes {
        if page.documents.len() >= limit && last_log != Some(log) {
            break;
        }
        page.documents.push(document);
        page.last[index] = Some(lsn);
        last_log = Some(log);
    }
    page
}

/// One item as the latest-version mode serves it in the wire format
/// 2021-09-15: the item (with `_lsn`) as `current`, and `metadata` with its
/// LSN and the time of its last write (`crts`, which is its `_ts`). No
/// `operationType` or `previousImageLSN`: this mode keeps no history, and
/// the Rust SDK documents this mode's metadata as `lsn`/`crts` without an
/// operation type (`docs/src/reference/protocol.md#change-feed-wire-format`).
/// Spliced, not parsed.
fn latest_version_wrapped(item: &Item) -> Bytes {
    let current = item.with_lsn();
    let metadata = format!(
        ",\"metadata\":{{\"lsn\":{},\"crts\":{}}}}}",
        item.range_lsn, item.ts
    );
    let mut out = Vec::with_capacity(current.len() + metadata.len() + 12);
    out.extend_from_slice(b"{\"current\":");
    out.extend_from_slice(&current);
    out.extend_from_slice(metadata.as_bytes());
    Bytes::from(out)
}

/// One change as the all-versions-and-deletes mode serves it.
fn full_fidelity(c: &Container, change: &Change) -> Bytes {
    let mut metadata = json!({
        "operationType": match change.kind {
            ChangeKind::Create => "create",
            ChangeKind::Replace => "replace",
            ChangeKind::Delete { .. } => "delete",
        },
        "lsn": change.range_lsn,
        "crts": change.crts,
    });
    if let Some(previous) = change.previous_lsn {
        metadata["previousImageLSN"] = previous.get().into();
    }
    let image = |lsn| -> Value {
        let bytes = crate::data::store::with_lsn(&change.body, lsn);
        serde_json::from_slice(&bytes).unwrap_or_default()
    };
    let value = match change.kind {
        ChangeKind::Create | ChangeKind::Replace => {
            json!({"current": image(change.range_lsn), "metadata": metadata})
        }
        // No `previous` image: the service documents none ("there is
        // currently no way to get the previous version"), and keeping one
        // would hold every purged item in memory for the retention.
        ChangeKind::Delete { ttl_expired } => {
            metadata["id"] = change.key.id().into();
            metadata["partitionKey"] = c.partition_key().key_object(change.key.pk());
            metadata["timeToLiveExpired"] = ttl_expired.into();
            json!({"current": {}, "metadata": metadata})
        }
    };
    Bytes::from(value.to_string())
}

/// 200 with the changes, or 304 with none; `etag` is where to continue.
fn answer(rid: &str, documents: &[Bytes], etag: &str, charge: Charge) -> Response {
    let mut response = if documents.is_empty() {
        let mut response = Response::empty(Status::NOT_MODIFIED, charge);
        response.headers.item_count = Some(0);
        response
    } else {
        Response::feed(rid, "Documents", documents, None, charge)
    };
    response.headers.etag = Some(ResponseEtag::Text(format!("\"{etag}\"")));
    response
}
