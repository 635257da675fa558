//! `x-ms-alt-content-path`, the owner of what a response is about, by
//! name: `dbs/{db}` for a container or a user, `dbs/{db}/colls/{coll}` for
//! an item, a script or a conflict. The Java SDK builds a resource's link
//! from it (`RxDocumentServiceResponse` → `PathsHelper.
//! generatePathForNameBased`) and keys its session tokens by that link: a
//! created container without it fails in the SDK with a
//! NullPointerException. Item responses carry the container's own
//! (`response.rs`, `write_names`); every other successful response gets it
//! here, from the request's path; both are written by [`header_value`],
//! its one builder. Refusals do not: azure-cosmos (Python) drops its
//! routing-map cache when a 404 names an owner (the sdist's
//! `test_pkrange_survives_full_crud_lifecycle`, an item read after its
//! delete).

use axum::http::HeaderValue;
use bytes::Bytes;
use percent_encoding::{percent_decode_str, utf8_percent_encode, CONTROLS};

/// The owner's path of the resource or feed `path` names, or `None` for
/// the account, databases (whose owner is the account) and offers.
///
/// A link has an even number of segments (`dbs/a/colls/b`: its owner is
/// `dbs/a`), a feed an odd one (`dbs/a/colls`: its owner is `dbs/a`).
/// Names are sent decoded, as the container's own header sends them.
pub fn of(path: &str) -> Option<HeaderValue> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    if segments.first() != Some(&"dbs") || segments.len() < 3 {
        return None;
    }
    let owner = &segments[..segments.len() - 2 + segments.len() % 2];
    let owner = owner
        .iter()
        .map(|s| percent_decode_str(s).decode_utf8_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Some(header_value(&Bytes::from(owner)))
}

/// A path by names (or a RID) as a header value, the one spelling of
/// `x-ms-alt-content-path` (and of `x-ms-content-path`): the container's
/// own on item responses (`response.rs`, `write_names`, over the bytes the store
/// built once, shared: no copy) and every other response's ([`of`]).
///
/// Sent as it is: a space, `+`, `%` or a non-ASCII letter is the name's
/// own, as the SDKs compare it with the links they build (the Python SDK's
/// session container looks the header up among its unquoted
/// `dbs/{db}/colls/{coll}` links). A control character no header may hold:
/// a name with one is sent percent-encoded (its controls, and its non-ASCII
/// letters as UTF-8), the nearest a header can say it.
pub fn header_value(path: &Bytes) -> HeaderValue {
    HeaderValue::from_maybe_shared(path.clone()).unwrap_or_else(|_| {
        let path = String::from_utf8_lossy(path);
        let encoded = utf8_percent_encode(&path, CONTROLS).to_string();
        HeaderValue::from_str(&encoded).expect("percent-encoded: visible ASCII")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(path: &str) -> Option<String> {
        of(path).map(|v| String::from_utf8(v.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn the_owner_of_links_and_feeds() {
        assert_eq!(owner("/dbs/a/colls"), Some("dbs/a".into()));
        assert_eq!(owner("/dbs/a/colls/b"), Some("dbs/a".into()));
        assert_eq!(
            owner("/dbs/a/users/u/permissions"),
            Some("dbs/a/users/u".into())
        );
        assert_eq!(owner("/dbs/a/colls/b/docs"), Some("dbs/a/colls/b".into()));
        assert_eq!(
            owner("/dbs/a/colls/b/docs/x/"),
            Some("dbs/a/colls/b".into())
        );
        assert_eq!(
            owner("/dbs/a/colls/b/sprocs/s"),
            Some("dbs/a/colls/b".into())
        );
    }

    /// A control character in a name, which no header may hold, is sent
    /// percent-encoded, as the container's own header sends it.
    #[test]
    fn a_control_character_is_percent_encoded() {
        assert_eq!(owner("/dbs/a%01b/colls"), Some("dbs/a%01b".into()));
        let own = header_value(&Bytes::from_static(b"dbs/a\x01b/colls/c"));
        assert_eq!(own.to_str().unwrap(), "dbs/a%01b/colls/c");
    }

    /// One spelling, whichever way a response names its owner: the
    /// container's own path (item responses) and the path read back from
    /// the request's URL (every other response) give the same header.
    #[test]
    fn every_name_has_one_spelling_from_the_container_and_from_the_url() {
        for (name, sent) in [
            ("a b", "a b"),
            ("a+b", "a+b"),
            ("100%", "100%"),
            ("déjà", "déjà"),
            ("a b+c%déjà\u{7}", "a b+c%d%C3%A9j%C3%A0%07"),
            ("tab\tand\u{7f}", "tab%09and%7F"),
        ] {
            let container = header_value(&Bytes::from(format!("dbs/{name}/colls/c")));
            assert_eq!(
                container.as_bytes(),
                format!("dbs/{sent}/colls/c").as_bytes(),
                "{name:?}"
            );
            // As a client writes it in a URL: every byte but letters and
            // digits escaped.
            let url = format!(
                "/dbs/{}/colls/c/docs/x",
                utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC)
            );
            assert_eq!(of(&url), Some(container), "{name:?} in {url}");
        }
    }

    #[test]
    fn names_are_decoded() {
        assert_eq!(owner("/dbs/my%20db/colls"), Some("dbs/my db".into()));
        assert_eq!(
            owner("/dbs/d%C3%A9j%C3%A0/colls/c"),
            Some("dbs/déjà".into())
        );
    }

    #[test]
    fn the_account_databases_and_offers_have_none() {
        for path in [
            "/",
            "",
            "/dbs",
            "/dbs/a",
            "/offers",
            "/offers/x",
            "/_emulator/clock",
        ] {
            assert_eq!(owner(path), None, "{path}");
        }
    }
}
