//! What kind of operation an HTTP request is (`operations/kind.rs`): a
//! point read, a query, a create... ([`classify`]), and which database and
//! container its path names: what the steps around every operation
//! (`operations/around.rs`) read. Read from the method, the path (as
//! routed: trailing slash trimmed) and the headers the SDKs send; nothing
//! is parsed beyond them.

use std::borrow::Cow;

use axum::http::{HeaderMap, Method};

use super::request::CosmosHeaders;
use crate::operations::OperationKind as Operation;

/// A classified request: its operation and the names its path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified<'a> {
    pub kind: Operation,
    /// The database the path names (`/dbs/{db}/...`), percent-decoded.
    pub database: Option<Cow<'a, str>>,
    /// The container the path names (`/dbs/{db}/colls/{coll}/...`).
    pub container: Option<Cow<'a, str>>,
}

/// What operation the request `method path` with `headers` is.
pub fn classify<'a>(method: &Method, path: &'a str, headers: &HeaderMap) -> Classified<'a> {
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let first = segments.next();
    if first == Some("_emulator") {
        return unnamed(Operation::Control);
    }
    if first.is_none() {
        return unnamed(Operation::Account);
    }
    if first != Some("dbs") {
        return unnamed(metadata(method, headers));
    }
    let database = segments.next().map(decoded);
    let below_database = segments.next();
    let container = match below_database {
        Some("colls") => segments.next().map(decoded),
        _ => None,
    };
    let kind = container.as_ref().and(segments.next());
    let id = segments.next();
    let rest = segments.next();
    let operation = match (kind, id, rest) {
        (Some("docs"), None, None) => feed_operation(method, headers),
        (Some("docs"), Some(_), None) => match *method {
            Method::GET => Operation::Read,
            Method::PUT => Operation::Replace,
            Method::PATCH => Operation::Patch,
            Method::DELETE => Operation::Delete,
            _ => metadata(method, headers),
        },
        (Some("sprocs"), Some(_), None) if method == Method::POST => Operation::Script,
        (Some("operations"), Some("partitionkeydelete"), None) => Operation::Delete,
        _ => metadata(method, headers),
    };
    Classified {
        kind: operation,
        database,
        container,
    }
}

/// A request to a container's `docs`: the feed, a query, a write or a batch.
fn feed_operation(method: &Method, headers: &HeaderMap) -> Operation {
    match *method {
        Method::GET => {
            let incremental = headers
                .text("a-im")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("incremental feed"));
            if incremental {
                Operation::ChangeFeed
            } else {
                Operation::Read
            }
        }
        Method::POST => {
            if headers.flag("x-ms-cosmos-is-batch-request") {
                Operation::Batch
            } else if headers.is_query() {
                Operation::Query
            } else if headers.flag("x-ms-documentdb-is-upsert") {
                Operation::Upsert
            } else {
                Operation::Create
            }
        }
        _ => metadata(method, headers),
    }
}

/// A request for another resource: it changes the account unless it reads
/// (a GET, or a query).
fn metadata(method: &Method, headers: &HeaderMap) -> Operation {
    Operation::Metadata {
        changes: method != Method::GET && method != Method::HEAD && !headers.is_query(),
    }
}

fn unnamed(operation: Operation) -> Classified<'static> {
    Classified {
        kind: operation,
        database: None,
        container: None,
    }
}

/// A path segment as the routes read it: percent-decoded.
fn decoded(segment: &str) -> Cow<'_, str> {
    percent_encoding::percent_decode_str(segment).decode_utf8_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    #[rstest]
    #[case::point_read("GET", "/dbs/d/colls/c/docs/i", &[], Operation::Read)]
    #[case::read_feed("GET", "/dbs/d/colls/c/docs", &[], Operation::Read)]
    #[case::change_feed("GET", "/dbs/d/colls/c/docs", &[("a-im", "Incremental feed")], Operation::ChangeFeed)]
    #[case::query_flag("POST", "/dbs/d/colls/c/docs", &[("x-ms-documentdb-isquery", "True")], Operation::Query)]
    #[case::query_type("POST", "/dbs/d/colls/c/docs", &[("content-type", "application/query+json")], Operation::Query)]
    #[case::query_plan("POST", "/dbs/d/colls/c/docs", &[("x-ms-cosmos-is-query-plan-request", "true")], Operation::Query)]
    #[case::create("POST", "/dbs/d/colls/c/docs", &[("content-type", "application/json")], Operation::Create)]
    #[case::upsert("POST", "/dbs/d/colls/c/docs", &[("x-ms-documentdb-is-upsert", "true")], Operation::Upsert)]
    #[case::not_upsert("POST", "/dbs/d/colls/c/docs", &[("x-ms-documentdb-is-upsert", "false")], Operation::Create)]
    #[case::batch("POST", "/dbs/d/colls/c/docs", &[("x-ms-cosmos-is-batch-request", "true"), ("x-ms-documentdb-is-upsert", "true")], Operation::Batch)]
    #[case::replace("PUT", "/dbs/d/colls/c/docs/i", &[], Operation::Replace)]
    #[case::patch("PATCH", "/dbs/d/colls/c/docs/i", &[], Operation::Patch)]
    #[case::delete("DELETE", "/dbs/d/colls/c/docs/i", &[], Operation::Delete)]
    #[case::partition_delete("POST", "/dbs/d/colls/c/operations/partitionkeydelete", &[], Operation::Delete)]
    #[case::script("POST", "/dbs/d/colls/c/sprocs/s", &[], Operation::Script)]
    #[case::script_definition("PUT", "/dbs/d/colls/c/sprocs/s", &[], Operation::Metadata { changes: true })]
    #[case::script_list("GET", "/dbs/d/colls/c/sprocs", &[], Operation::Metadata { changes: false })]
    #[case::account("GET", "/", &[], Operation::Account)]
    #[case::databases("GET", "/dbs", &[], Operation::Metadata { changes: false })]
    #[case::database_query("POST", "/dbs", &[("x-ms-documentdb-isquery", "true")], Operation::Metadata { changes: false })]
    #[case::database("DELETE", "/dbs/d", &[], Operation::Metadata { changes: true })]
    #[case::containers("POST", "/dbs/d/colls", &[], Operation::Metadata { changes: true })]
    #[case::container("GET", "/dbs/d/colls/c", &[], Operation::Metadata { changes: false })]
    #[case::pkranges("GET", "/dbs/d/colls/c/pkranges", &[("a-im", "Incremental feed")], Operation::Metadata { changes: false })]
    #[case::offers("POST", "/offers", &[("x-ms-documentdb-isquery", "true")], Operation::Metadata { changes: false })]
    #[case::offer("PUT", "/offers/abc", &[], Operation::Metadata { changes: true })]
    #[case::users("GET", "/dbs/d/users/u/permissions/p", &[], Operation::Metadata { changes: false })]
    #[case::triggers("POST", "/dbs/d/colls/c/triggers", &[], Operation::Metadata { changes: true })]
    #[case::udfs("GET", "/dbs/d/colls/c/udfs/f", &[], Operation::Metadata { changes: false })]
    #[case::conflicts("GET", "/dbs/d/colls/c/conflicts", &[], Operation::Metadata { changes: false })]
    #[case::keys("GET", "/dbs/d/clientencryptionkeys/k", &[], Operation::Metadata { changes: false })]
    #[case::control("POST", "/_emulator/faults", &[], Operation::Control)]
    #[case::control_reset("POST", "/_emulator/reset", &[], Operation::Control)]
    fn classifies(
        #[case] method: &str,
        #[case] path: &str,
        #[case] pairs: &[(&str, &str)],
        #[case] expected: Operation,
    ) {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let classified = classify(&method, path, &headers(pairs));
        assert_eq!(classified.kind, expected, "{method} {path} {pairs:?}");
    }

    #[test]
    fn names_the_database_and_container_decoded() {
        let none = headers(&[]);
        let item = classify(&Method::GET, "/dbs/my%20db/colls/c%2B1/docs/i", &none);
        assert_eq!(item.database.as_deref(), Some("my db"));
        assert_eq!(item.container.as_deref(), Some("c+1"));
        let database = classify(&Method::GET, "/dbs/d", &none);
        assert_eq!(database.database.as_deref(), Some("d"));
        assert_eq!(database.container, None);
        let users = classify(&Method::GET, "/dbs/d/users/u", &none);
        assert_eq!(users.container, None);
        let account = classify(&Method::GET, "/", &none);
        assert_eq!((account.database, account.container), (None, None));
    }
}
