//! The address feed (issue 49, point 2): `GET /addresses/?$resolveFor=...`
//! answers four replicas per range (one primary) as `rntbd://` URIs on the
//! host and port the client used, under the service's misspelt names
//! (`Addresss`, `physcialUri`); a split range gets none; the master
//! partition's form answers too; the signature is the one the Java SDK
//! makes (`get`, `docs`, the container's RID lower-cased).

use cosmos_emulator::protocol::auth::{authorization_header, payload, MasterKey};
use serde_json::{json, Value};

use crate::common::{TestClient, DB};

/// A GET of the feed signed for (`segment`, `link`), with `host` as its
/// `Host` header when given.
fn feed(
    c: &TestClient,
    query: &str,
    segment: &str,
    link: &str,
    host: Option<&str>,
) -> (u16, Value) {
    let key = MasterKey::from_base64(c.emulator.key()).unwrap();
    let date = httpdate::fmt_http_date(std::time::SystemTime::now());
    let auth = authorization_header(&key, &payload("get", segment, link, &date, ""));
    let mut request = reqwest::blocking::Client::new()
        .get(format!(
            "{}/addresses/?{query}",
            c.endpoint().trim_end_matches('/')
        ))
        .header("x-ms-date", &date)
        .header("x-ms-version", "2020-07-15")
        .header("authorization", auth);
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    let bytes = response.bytes().unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn container() -> (TestClient, String, String) {
    let c = crate::splits::container("400");
    let reply = c.get("/dbs/db/colls/c", &[]);
    let coll_rid = reply.body["_rid"].as_str().unwrap().to_string();
    let db_rid = c.get(&format!("/dbs/{DB}"), &[]).body["_rid"]
        .as_str()
        .unwrap()
        .to_string();
    (c, db_rid, coll_rid)
}

fn resolve_for(db_rid: &str, coll_rid: &str) -> String {
    let encode = |s: &str| {
        percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    format!(
        "$resolveFor={}&$filter=protocol%20eq%20rntbd&$partitionKeyRangeIds=",
        encode(&format!("dbs/{db_rid}/colls/{coll_rid}/docs"))
    )
}

#[test]
fn four_replicas_per_range_on_the_host_the_client_used() {
    let (c, db_rid, coll_rid) = container();
    let query = format!("{}0", resolve_for(&db_rid, &coll_rid));
    let link = coll_rid.to_lowercase();
    let (status, body) = feed(&c, &query, "docs", &link, Some("cosmos.example:12345"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["_count"], 4);
    assert_eq!(body["_rid"], coll_rid.as_str());
    let addresses = body["Addresss"].as_array().unwrap();
    assert_eq!(addresses.len(), 4);
    let primaries = addresses.iter().filter(|a| a["isPrimary"] == true).count();
    assert_eq!(primaries, 1, "one primary, three secondaries");
    let mut uris = std::collections::BTreeSet::new();
    for address in addresses {
        assert_eq!(address["protocol"], "rntbd");
        assert_eq!(address["partitionKeyRangeId"], "0");
        let uri = address["physcialUri"].as_str().unwrap();
        assert!(uri.starts_with("rntbd://cosmos.example:12345/"), "{uri}");
        assert!(
            uri.contains("/partitions/0/"),
            "the path names the range: {uri}"
        );
        assert!(uri.ends_with('/'));
        assert!(
            uri.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~:/+=".contains(&b)),
            "URI-safe: {uri}"
        );
        uris.insert(uri.to_string());
    }
    assert_eq!(uris.len(), 4, "four distinct replicas");

    // Another Host, another host in the URIs.
    let (_, body) = feed(&c, &query, "docs", &link, Some("127.0.0.1:9"));
    let uri = body["Addresss"][0]["physcialUri"].as_str().unwrap();
    assert!(uri.starts_with("rntbd://127.0.0.1:9/"), "{uri}");
}

#[test]
fn the_master_partition_answers_too() {
    let (c, _, _) = container();
    let (status, body) = feed(
        &c,
        "$resolveFor=dbs&$filter=protocol%20eq%20rntbd",
        "dbs",
        "",
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["Addresss"].as_array().unwrap().len(), 4);
    assert_eq!(body["_count"], 4);
}

#[test]
fn a_split_range_has_no_replicas_and_its_children_do() {
    let (c, db_rid, coll_rid) = container();
    let split = c.post(
        "/_emulator/split",
        &json!({"database": DB, "container": "c", "range": "0"}),
        &[],
    );
    assert!(split.status < 300, "{}", split.body);
    let link = coll_rid.to_lowercase();
    let (status, body) = feed(
        &c,
        &format!("{}0", resolve_for(&db_rid, &coll_rid)),
        "docs",
        &link,
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(body["Addresss"], json!([]), "the parent is gone");
    assert_eq!(body["_count"], 0);
    let (_, body) = feed(
        &c,
        &format!("{}1", resolve_for(&db_rid, &coll_rid)),
        "docs",
        &link,
        None,
    );
    assert_eq!(body["_count"], 4, "a child has its replicas");
    assert_eq!(body["Addresss"][0]["partitionKeyRangeId"], "1");
}

#[test]
fn the_signature_is_checked() {
    let (c, db_rid, coll_rid) = container();
    let query = format!("{}0", resolve_for(&db_rid, &coll_rid));
    let (status, body) = feed(&c, &query, "docs", "not-the-rid", None);
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "Unauthorized");
}
