//! `x-ms-alt-content-path`, the owner of what a response is about, by
//! name: `dbs/{db}` for a container or a user, `dbs/{db}/colls/{coll}` for
//! an item, a script or a conflict. The Java SDK builds a resource's link
//! from it (`RxDocumentServiceResponse` → `PathsHelper.
//! generatePathForNameBased`) and keys its session tokens by that link: a
//! created container without it fails in the SDK with a
//! NullPointerException. Item responses carry the container's own
//! (`container_context.rs`); every other successful response gets it
//! here, from the request's path. Refusals do not: azure-cosmos (Python)
//! drops its routing-map cache when a 404 names an owner (the sdist's
//! `test_pkrange_survives_full_crud_lifecycle`, an item read after its
//! delete).

use axum::http::HeaderValue;

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
        .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Some(header_value(&owner))
}

/// A name path as a header value: as it is, or, if it holds a character no
/// header may (a control character in a name), percent-encoded. One
/// spelling for the container's own header (`container_context.rs`) and
/// this one.
pub fn header_value(path: &str) -> HeaderValue {
    HeaderValue::from_str(path).unwrap_or_else(|_| {
        let encoded = percent_encoding::utf8_percent_encode(path, percent_encoding::CONTROLS);
        HeaderValue::from_str(&encoded.to_string()).expect("percent-encoded")
    })
}

#[cfg(test)]
mod tests {
    use super::of;

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
        let own = super::header_value("dbs/a\u{1}b/colls/c");
        assert_eq!(own.to_str().unwrap(), "dbs/a%01b/colls/c");
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
