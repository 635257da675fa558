//! The change feed: reading it in either mode (latest version; all versions
//! and deletes), deciding whether a target has the mode at all (if not, the
//! case is skipped, not failed), waiting for the purge, and the tokens of
//! what came back. The wire contract is the guide's
//! `docs/src/reference/protocol.md#change-feed-latest-version` (and
//! `#change-feed-all-versions-and-deletes`);
//! the matching rules are in the README ("Change feed").

use crate::client::{
    excerpt, partition_key_header, segment, Client, Request, Response, TransportError,
};
use crate::clock::{TimeMode, Timeline};
use crate::fixtures::canonical::canonical;
use crate::fixtures::grammar::{normalize_rows, render_rows};
use crate::fixtures::{Changes, Expect, FeedMode, FeedStart};
use crate::outcome::{observe_error, Observed};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::time::Instant;

/// On the wall clock, how long (real seconds) a `purge` step waits for the
/// TTL deletes it expects, unless `--purge-wait` says otherwise. The
/// service purges in the background, later than the expiry instant (the
/// .NET SDK's own emulator test waits up to 250 s).
pub const DEFAULT_PURGE_WAIT: Duration = Duration::from_secs(300);
/// A feed that still has pages after this many is reported as such.
const MAX_PAGES: usize = 100;
/// How often the wall clock polls the all-versions feed during a purge wait.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// On the wall clock, how much earlier than the expected instant a TTL
/// delete's `crts` may read (real seconds): `crts` and `_ts` are whole
/// seconds, the request takes time and the target's clock is not ours.
const WALL_CRTS_TOLERANCE: f64 = 2.5;

/// The wire format version the all-versions mode is asked for.
pub const WIRE_FORMAT_VERSION: &str = "2021-09-15";

/// The `A-IM` header of a mode.
pub fn a_im(mode: FeedMode) -> &'static str {
    match mode {
        FeedMode::LatestVersion => "Incremental Feed",
        FeedMode::AllVersions => "Full-Fidelity Feed",
    }
}

/// How a case's feed times map to case time, and its cursors.
#[derive(Debug, Clone)]
pub struct FeedState {
    /// The target's epoch seconds at case time 0.
    pub origin: f64,
    /// Real seconds per case second (1 on the test clock).
    pub scale: f64,
    /// Whether time passes on the wall clock (purges are waited for by
    /// polling; `crts` is compared with a tolerance).
    pub wall: bool,
    /// The last `etag` of each mode this case has read.
    cursors: BTreeMap<FeedMode, String>,
}

impl FeedState {
    /// A case's feed state, on its first change feed step: case time 0 is
    /// the timeline's origin.
    pub async fn open(client: &Client, timeline: &Timeline) -> Result<FeedState, String> {
        let origin = timeline.origin(client).await?;
        Ok(match timeline.mode() {
            TimeMode::Manual => FeedState::new(origin, 1.0, false),
            TimeMode::Wall(wall) => FeedState::new(origin, wall.scale, true),
        })
    }

    pub fn new(origin: f64, scale: f64, wall: bool) -> FeedState {
        FeedState {
            origin,
            scale,
            wall,
            cursors: BTreeMap::new(),
        }
    }

    /// Whether a `crts` (target epoch seconds) is at or after case time `bound`.
    fn at_or_after(&self, crts: f64, bound: u64) -> bool {
        let tolerance = if self.wall { WALL_CRTS_TOLERANCE } else { 0.0 };
        crts - self.origin >= bound as f64 * self.scale - tolerance
    }

    fn case_time(&self, crts: f64) -> f64 {
        (crts - self.origin) / self.scale
    }
}

/// What a change feed step came to.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedOutcome {
    Observed(Observed),
    /// The target does not have what the step needs (the mode, or a purge
    /// on its test clock): the case is skipped with this reason.
    Unsupported(String),
}

/// A feed answer outside the contract: its token, and a sentence for a skip.
struct Refusal {
    observed: Observed,
    why: String,
    /// The answer shows the target lacks the mode, whichever read it is.
    skip: bool,
}

/// One change feed step: optionally wait for the purge, read every page
/// since the step's start, render the entries. `expect` is the step's: the
/// TTL deletes it names are waited for and their instants checked.
pub async fn read(
    client: &Client,
    collection_link: &str,
    partition_key: &str,
    changes: &Changes,
    expect: &Expect,
    state: &mut FeedState,
    purge_wait: Duration,
) -> Result<FeedOutcome, TransportError> {
    let mode = changes.mode;
    // The first request of a mode in a case tells whether the target has it.
    let probe = !state.cursors.contains_key(&mode);
    let mut detail = Vec::new();
    if changes.purge && !state.wall {
        match purge(client).await? {
            Ok(purged) => detail.push(format!("POST /_emulator/purge: {purged} purged")),
            Err(reason) => return Ok(FeedOutcome::Unsupported(reason)),
        }
    }
    if probe && mode == FeedMode::AllVersions {
        // The mode starts only from now or a continuation: a target that
        // serves a start from the beginning ignores it.
        let response = client
            .send(request(collection_link, partition_key, changes, None))
            .await?;
        if response.status < 400 {
            return Ok(FeedOutcome::Unsupported(format!(
                "the target has no all-versions-and-deletes change feed: GET docs with A-IM: {} from the beginning, which the mode refuses (400), answered {}: a feed that ignores A-IM",
                a_im(mode),
                response.status
            )));
        }
    }
    let deletes = expect.ttl_deletes();
    let awaited: BTreeSet<&str> = deletes.iter().map(|(id, _)| *id).collect();
    let started = Instant::now();
    let mut documents = Vec::new();
    let mut start = match changes.from {
        Some(FeedStart::Beginning) => None,
        Some(FeedStart::Now) => Some("*".to_string()),
        None => state.cursors.get(&mode).cloned(),
    };
    for attempt in 0.. {
        let first = probe && attempt == 0;
        match drain(
            client,
            collection_link,
            partition_key,
            changes,
            start.clone(),
            first,
        )
        .await?
        {
            Ok((page, etag)) => {
                documents.extend(page);
                state.cursors.insert(mode, etag.clone());
                start = Some(etag);
            }
            Err(refusal) if first || refusal.skip => {
                return Ok(FeedOutcome::Unsupported(refusal.why));
            }
            Err(refusal) => return Ok(FeedOutcome::Observed(refusal.observed)),
        }
        if !(changes.purge && state.wall) {
            break;
        }
        let arrived: BTreeSet<&str> = documents
            .iter()
            .filter(is_ttl_delete)
            .filter_map(change_id)
            .collect();
        let elapsed = started.elapsed();
        if awaited.is_subset(&arrived) {
            detail.push(format!(
                "waited {:.1} s for the TTL deletes of {} (bound {} s)",
                elapsed.as_secs_f64(),
                awaited.iter().copied().collect::<Vec<_>>().join(", "),
                purge_wait.as_secs()
            ));
            break;
        }
        if elapsed >= purge_wait {
            let missing: Vec<&str> = awaited.difference(&arrived).copied().collect();
            detail.push(format!(
                "the TTL deletes of {} had not arrived after {:.0} s (the bound, --purge-wait)",
                missing.join(", "),
                elapsed.as_secs_f64()
            ));
            break;
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
    let entries: Vec<String> = documents
        .iter()
        .map(|doc| match mode {
            FeedMode::AllVersions => all_versions_entry(doc, &deletes, state),
            FeedMode::LatestVersion => latest_version_entry(doc, changes.show.as_deref()),
        })
        .collect();
    Ok(FeedOutcome::Observed(Observed {
        token: render_rows(&normalize_rows(entries)),
        detail: (!detail.is_empty()).then(|| detail.join("; ")),
    }))
}

/// `POST /_emulator/purge` on the test clock: the number purged, or why
/// the case cannot wait for the purge.
async fn purge(client: &Client) -> Result<Result<u64, String>, TransportError> {
    let request = Request::new(
        Method::POST,
        "_emulator/purge".to_string(),
        "",
        String::new(),
    )
    .json(&json!({}));
    let response = client.send(request).await?;
    let purged = (response.status == 200)
        .then(|| response.json())
        .flatten()
        .and_then(|v| v.get("purged").and_then(Value::as_u64));
    Ok(purged.ok_or_else(|| {
        format!(
            "the target's test clock cannot purge on request (POST /_emulator/purge answered {}: {}), so the case cannot wait for its TTL deletes",
            response.status,
            excerpt(&response.body)
        )
    }))
}

fn request(
    collection_link: &str,
    partition_key: &str,
    changes: &Changes,
    if_none_match: Option<&str>,
) -> Request<'static> {
    let docs = collection_link
        .split('/')
        .map(segment)
        .chain(std::iter::once("docs".to_string()))
        .collect::<Vec<_>>()
        .join("/");
    let mut request = Request::new(Method::GET, docs, "docs", collection_link.to_string())
        .header("a-im", a_im(changes.mode))
        .header(
            "x-ms-documentdb-partitionkey",
            partition_key_header(partition_key),
        );
    if changes.mode == FeedMode::AllVersions {
        request = request.header(
            "x-ms-cosmos-changefeed-wire-format-version",
            WIRE_FORMAT_VERSION,
        );
    }
    if let Some(value) = if_none_match {
        request = request.header("if-none-match", value);
    }
    if let Some(size) = changes.page_size {
        request = request.header("x-ms-max-item-count", size.to_string());
    }
    request
}

/// Reads pages from `start` (an `If-None-Match` value, `None` for the
/// beginning) until the target has nothing newer: a 304, or a 200 without
/// documents. `probe` applies the contract of a mode's first answer.
async fn drain(
    client: &Client,
    collection_link: &str,
    partition_key: &str,
    changes: &Changes,
    start: Option<String>,
    probe: bool,
) -> Result<Result<(Vec<Value>, String), Refusal>, TransportError> {
    let mode = changes.mode;
    let what = format!(
        "GET docs with A-IM: {}{}",
        a_im(mode),
        match start.as_deref() {
            None => " from the beginning",
            Some("*") => " from now",
            Some(_) => " from a continuation",
        }
    );
    let refuse = |observed: Observed, answered: String| Refusal {
        why: format!(
            "the target has no {} change feed: {what} answered {answered}",
            match mode {
                FeedMode::LatestVersion => "latest-version",
                FeedMode::AllVersions => "all-versions-and-deletes",
            }
        ),
        observed,
        skip: false,
    };
    let mut documents = Vec::new();
    let mut if_none_match = start;
    for page in 0..MAX_PAGES {
        let response = client
            .send(request(
                collection_link,
                partition_key,
                changes,
                if_none_match.as_deref(),
            ))
            .await?;
        let first = probe && page == 0;
        let Some(etag) = response.etag.clone().filter(|e| !e.is_empty()) else {
            let observed = match response.status {
                200 | 304 => Observed {
                    token: format!("{} (no etag header)", response.status),
                    detail: Some(format!("body: {}", excerpt(&response.body))),
                },
                _ => observe_error(&response),
            };
            let answered = answered(&response, "nothing to continue from");
            return Ok(Err(refuse(observed, answered)));
        };
        match response.status {
            304 => return Ok(Ok((documents, etag))),
            200 => {}
            _ => {
                let answered = answered(&response, "");
                return Ok(Err(refuse(observe_error(&response), answered)));
            }
        }
        let Some(page) = response
            .json()
            .and_then(|v| v.get("Documents").and_then(Value::as_array).cloned())
        else {
            let observed = Observed {
                token: "200 (no Documents array)".to_string(),
                detail: Some(format!("body: {}", excerpt(&response.body))),
            };
            return Ok(Err(refuse(observed, answered(&response, ""))));
        };
        // The shape of a page tells the mode: a target that answers another
        // shape ignores A-IM, whichever read of the case it is.
        let foreign = match mode {
            // Nothing is newer than now: a start from now answers 304.
            FeedMode::AllVersions if first => {
                Some("200 where a start from now answers 304: a feed that ignores A-IM")
            }
            FeedMode::AllVersions => page
                .iter()
                .any(|d| {
                    metadata(d)
                        .and_then(|m| m.get("operationType"))
                        .is_none()
                })
                .then_some("items that are not changes (no metadata.operationType): a feed that ignores A-IM"),
            FeedMode::LatestVersion => page
                .iter()
                .any(|d| d.get("_lsn").is_none())
                .then_some("items without _lsn: a feed that ignores A-IM"),
        };
        if let Some(foreign) = foreign {
            let observed = Observed {
                token: format!("200 ({foreign})"),
                detail: Some(format!("body: {}", excerpt(&response.body))),
            };
            let mut refusal = refuse(observed, format!("200 ({foreign})"));
            refusal.skip = true;
            return Ok(Err(refusal));
        }
        let empty = page.is_empty();
        documents.extend(page);
        if empty {
            return Ok(Ok((documents, etag)));
        }
        if_none_match = Some(etag);
    }
    let observed = Observed {
        token: format!("more than {MAX_PAGES} pages"),
        detail: Some("the target kept answering new pages".to_string()),
    };
    Ok(Err(refuse(
        observed,
        format!("more than {MAX_PAGES} pages"),
    )))
}

/// What a refused answer was, for a skip reason: stable text (the status,
/// the error's code and the start of its message), never a body that holds
/// ids or times.
fn answered(response: &Response, note: &str) -> String {
    if response.etag.is_none() && matches!(response.status, 200 | 304) {
        return format!("{} without an etag header ({note})", response.status);
    }
    match response.error() {
        Some((code, message)) => {
            // The service's messages go on with ActivityId and the like.
            let first = message
                .split(['\r', '\n'])
                .next()
                .unwrap_or("")
                .split("ActivityId")
                .next()
                .unwrap_or("")
                .trim()
                .trim_end_matches([',', ';']);
            let first: String = first.chars().take(160).collect();
            if first.is_empty() {
                format!("{} {code}", response.status)
            } else {
                format!("{} {code}: {first}", response.status)
            }
        }
        None if response.status == 200 => "200 without a Documents array".to_string(),
        None => format!("{} (no error code)", response.status),
    }
}

fn metadata(doc: &Value) -> Option<&serde_json::Map<String, Value>> {
    doc.get("metadata").and_then(Value::as_object)
}

fn is_ttl_delete(doc: &&Value) -> bool {
    metadata(doc).is_some_and(|m| {
        m.get("operationType").and_then(Value::as_str) == Some("delete")
            && m.get("timeToLiveExpired") == Some(&Value::Bool(true))
    })
}

/// A change's item id: the metadata's (deletes), else the current or the
/// previous image's.
fn change_id(doc: &Value) -> Option<&str> {
    metadata(doc)
        .and_then(|m| m.get("id"))
        .or_else(|| doc.get("current").and_then(|c| c.get("id")))
        .or_else(|| doc.get("previous").and_then(|c| c.get("id")))
        .and_then(Value::as_str)
}

/// The token of one all-versions change: `create a`, `replace a`,
/// `delete a` (`timeToLiveExpired: false`), `ttl-delete a @>=N` (`true`,
/// with `crts` at or after the expected instant N), or what is wrong.
/// `deletes` are the TTL deletes the step expects, with their instants.
pub fn all_versions_entry(doc: &Value, deletes: &[(&str, u64)], state: &FeedState) -> String {
    let Some(meta) = metadata(doc) else {
        return format!("(not a change: {})", excerpt(&canonical(doc)));
    };
    let id = change_id(doc).unwrap_or("?");
    let operation = meta
        .get("operationType")
        .and_then(Value::as_str)
        .unwrap_or("(no operationType)");
    let expired = meta.get("timeToLiveExpired");
    match (operation, expired) {
        ("delete", Some(Value::Bool(false))) => format!("delete {id}"),
        ("delete", Some(Value::Bool(true))) => {
            let bound = deletes
                .iter()
                .find(|(expected_id, _)| *expected_id == id)
                .map(|(_, bound)| *bound);
            let Some(bound) = bound else {
                return format!("ttl-delete {id}");
            };
            match meta.get("crts").and_then(Value::as_f64) {
                Some(crts) if state.at_or_after(crts, bound) => {
                    format!("ttl-delete {id} @>={bound}")
                }
                Some(crts) => format!("ttl-delete {id} @{:.0}", state.case_time(crts)),
                None => format!("ttl-delete {id} (no crts)"),
            }
        }
        ("delete", _) => format!("delete {id} (no timeToLiveExpired)"),
        (_, Some(Value::Bool(true))) => format!("{operation} {id} (timeToLiveExpired true)"),
        _ => format!("{operation} {id}"),
    }
}

/// The token of one latest-version item: its id, and `show`'s value.
pub fn latest_version_entry(doc: &Value, show: Option<&str>) -> String {
    let Some(id) = doc.get("id").and_then(Value::as_str) else {
        return format!("(not an item: {})", excerpt(&canonical(doc)));
    };
    let mut entry = id.to_string();
    if let Some(show) = show {
        match doc.get(show) {
            Some(value) => entry.push_str(&format!(" {show}={}", canonical(value))),
            None => entry.push_str(&format!(" {show} missing")),
        }
    }
    if doc.get("_lsn").is_none() {
        entry.push_str(" (no _lsn)");
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> FeedState {
        FeedState::new(1_000_000.0, 1.0, false)
    }

    fn expected() -> Vec<(&'static str, u64)> {
        vec![("a", 1000)]
    }

    #[test]
    fn a_ttl_delete_at_or_after_its_instant_matches_the_expectation() {
        let doc = json!({"current": {}, "metadata": {"operationType": "delete", "lsn": 9,
            "crts": 1_001_500, "timeToLiveExpired": true, "id": "a", "partitionKey": {"pk": "p"}},
            "previous": {"id": "a"}});
        assert_eq!(
            all_versions_entry(&doc, &expected(), &state()),
            "ttl-delete a @>=1000"
        );
        let early = json!({"metadata": {"operationType": "delete", "crts": 1_000_999,
            "timeToLiveExpired": true, "id": "a"}});
        assert_eq!(
            all_versions_entry(&early, &expected(), &state()),
            "ttl-delete a @999"
        );
        let exact = json!({"metadata": {"operationType": "delete", "crts": 1_001_000,
            "timeToLiveExpired": true, "id": "a"}});
        assert_eq!(
            all_versions_entry(&exact, &expected(), &state()),
            "ttl-delete a @>=1000"
        );
        let unexpected = json!({"metadata": {"operationType": "delete", "crts": 1_001_000,
            "timeToLiveExpired": true, "id": "b"}});
        assert_eq!(
            all_versions_entry(&unexpected, &expected(), &state()),
            "ttl-delete b"
        );
    }

    #[test]
    fn the_wall_clock_scales_and_tolerates_whole_seconds() {
        let wall = FeedState::new(1_000_000.0, 0.01, true);
        // 1000 case seconds are 10 real seconds; 8 s after the start is
        // within the tolerance, 5 s is not.
        let at = |crts: f64| {
            all_versions_entry(
                &json!({"metadata": {"operationType": "delete", "crts": crts,
                    "timeToLiveExpired": true, "id": "a"}}),
                &expected(),
                &wall,
            )
        };
        assert_eq!(at(1_000_008.0), "ttl-delete a @>=1000");
        assert_eq!(at(1_000_005.0), "ttl-delete a @500");
    }

    #[test]
    fn explicit_deletes_carry_time_to_live_expired_false() {
        let entry = |meta: Value| all_versions_entry(&json!({ "metadata": meta }), &[], &state());
        assert_eq!(
            entry(json!({"operationType": "delete", "id": "a", "timeToLiveExpired": false})),
            "delete a"
        );
        assert_eq!(
            entry(json!({"operationType": "delete", "id": "a"})),
            "delete a (no timeToLiveExpired)"
        );
        assert_eq!(
            all_versions_entry(
                &json!({"current": {"id": "a"}, "metadata": {"operationType": "replace", "lsn": 3}}),
                &[],
                &state()
            ),
            "replace a"
        );
        assert_eq!(
            all_versions_entry(
                &json!({"current": {"id": "a"}, "metadata": {"operationType": "create", "timeToLiveExpired": true}}),
                &[],
                &state()
            ),
            "create a (timeToLiveExpired true)"
        );
        assert_eq!(
            all_versions_entry(&json!({"id": "a", "_lsn": 3}), &[], &state()),
            "(not a change: {\"_lsn\":3,\"id\":\"a\"})"
        );
    }

    #[test]
    fn latest_version_items_show_their_id_and_one_property() {
        let doc = json!({"id": "a", "v": 2, "_lsn": 4});
        assert_eq!(latest_version_entry(&doc, None), "a");
        assert_eq!(latest_version_entry(&doc, Some("v")), "a v=2");
        assert_eq!(latest_version_entry(&doc, Some("w")), "a w missing");
        assert_eq!(
            latest_version_entry(&json!({"id": "a"}), None),
            "a (no _lsn)"
        );
    }
}
