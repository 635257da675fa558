//! Unit tests of `auth.rs`: the signing payload, signed resources as each
//! gateway reads URLs, dates, and signatures the SDKs send.

use super::*;
use rstest::rstest;

const KEY: &str = super::WELL_KNOWN_KEY;
const DATE: &str = "Tue, 01 Nov 2022 10:00:00 GMT";

/// The instant `DATE` names: the server's wall clock in these tests.
fn signed_at() -> SystemTime {
    httpdate::parse_http_date(DATE).unwrap()
}

#[rstest]
#[case("/", "", "")]
#[case("/dbs", "dbs", "")]
#[case("/dbs/", "dbs", "")]
#[case("/dbs/db1", "dbs", "dbs/db1")]
#[case("/dbs/db1/colls", "colls", "dbs/db1")]
#[case("/dbs/db1/colls/c1", "colls", "dbs/db1/colls/c1")]
#[case("/dbs/db1/colls/c1/docs/", "docs", "dbs/db1/colls/c1")]
#[case(
    "/dbs/db1/colls/c1/docs/item%201",
    "docs",
    "dbs/db1/colls/c1/docs/item 1"
)]
#[case("/dbs/db1/colls/c1/pkranges", "pkranges", "dbs/db1/colls/c1")]
#[case("/dbs/db1/colls/c1/sprocs", "sprocs", "dbs/db1/colls/c1")]
#[case("/dbs/db1/colls/c1/sprocs/s1", "sprocs", "dbs/db1/colls/c1/sprocs/s1")]
#[case("/dbs/db1/colls/c1/triggers/", "triggers", "dbs/db1/colls/c1")]
#[case(
    "/dbs/db1/colls/c1/triggers/t%201",
    "triggers",
    "dbs/db1/colls/c1/triggers/t 1"
)]
#[case("/dbs/db1/colls/c1/udfs", "udfs", "dbs/db1/colls/c1")]
#[case("/dbs/db1/colls/c1/udfs/u1", "udfs", "dbs/db1/colls/c1/udfs/u1")]
#[case(
    "/dbs/db1/colls/c1/operations/partitionkeydelete",
    "colls",
    "dbs/db1/colls/c1"
)]
#[case("/_emulator/clock", "", "")]
// Doubled slashes and trailing whitespace: the link is joined anew.
#[case("//dbs//db1//colls", "colls", "dbs/db1")]
#[case("/dbs/db1 /colls/c1\t/docs", "docs", "dbs/db1/colls/c1")]
#[case("/dbs/db1/colls/c1/docs/a\u{3000}", "docs", "dbs/db1/colls/c1/docs/a")]
#[case("/dbs/d/colls/c/docs/ /sprocs", "sprocs", "dbs/d/colls/c/docs/")]
fn resource_type_and_link(#[case] path: &str, #[case] ty: &str, #[case] link: &str) {
    let r = signed_resource(path);
    assert_eq!((r.resource_type.as_str(), r.links[0].as_str()), (ty, link));
}

/// What the service's gateway signs for ids that the SDKs send escaped
/// once: the cases of Microsoft's id-encoding tests.
#[rstest]
#[case(
    "/dbs/d/colls/c/docs/This%20is%20a%20test",
    "dbs/d/colls/c/docs/This is a test"
)]
#[case("/dbs/d/colls/c/docs/%20Test", "dbs/d/colls/c/docs/ Test")]
#[case(
    "/dbs/d/colls/c/docs/Disallowed%3FChars",
    "dbs/d/colls/c/docs/Disallowed?Chars"
)]
#[case(
    "/dbs/d/colls/c/docs/WithUnicode%E9%B1%80",
    "dbs/d/colls/c/docs/WithUnicode鱀"
)]
#[case(
    "/dbs/d/colls/c/docs/a,=.:~+-@()^$%7B%7D%5B%5D!_b",
    "dbs/d/colls/c/docs/a,=.:~+-@()^${}[]!_b"
)]
// Signed as "Test ", read as "Test".
#[case("/dbs/d/colls/c/docs/Test%20", "dbs/d/colls/c/docs/Test")]
#[case("/dbs/d/colls/c/docs/Test%20%20", "dbs/d/colls/c/docs/Test")]
// Signed as "x%20" and "y%E9%B1%80", decoded twice.
#[case("/dbs/d/colls/c/docs/x%2520", "dbs/d/colls/c/docs/x")]
#[case("/dbs/d/colls/c/docs/y%25E9%25B1%2580", "dbs/d/colls/c/docs/y鱀")]
// An escaped separator separates (a resource type `Chars` of the item
// `Disallowed`); an escaped `#` ends the path.
#[case(
    "/dbs/d/colls/c/docs/Disallowed%2FChars",
    "dbs/d/colls/c/docs/Disallowed"
)]
#[case(
    "/dbs/d/colls/c/docs/Disallowed%5CChars",
    "dbs/d/colls/c/docs/Disallowed"
)]
#[case(
    "/dbs/d/colls/c/docs/Disallowed%23Chars",
    "dbs/d/colls/c/docs/Disallowed"
)]
fn ids_are_read_as_the_gateway_reads_them(#[case] path: &str, #[case] link: &str) {
    assert_eq!(signed_resource(path).links[0], link);
}

/// The link verification borrows is the path's own slice exactly when
/// joining its segments would give that text.
#[rstest]
#[case("/dbs/db1/colls/c1/docs/a", Some("dbs/db1/colls/c1/docs/a"))]
#[case("/dbs/db1/colls/c1/docs", Some("dbs/db1/colls/c1"))]
#[case("/dbs/db1//colls/c1", None)]
#[case("/dbs/db1 /colls/c1", None)]
#[case("/dbs/d/colls/c/docs/a%20b", None)]
#[case("/", Some(""))]
fn a_link_is_borrowed_from_the_path_when_it_is_a_slice_of_it(
    #[case] path: &str,
    #[case] borrowed: Option<&str>,
) {
    let segments = gateway_segments(path);
    let resource = resource_of(path, &segments);
    match (&resource.link, borrowed) {
        (Cow::Borrowed(link), Some(expected)) => assert_eq!(*link, expected),
        (Cow::Owned(link), None) => assert_eq!(*link, signed_resource(path).links[0]),
        (link, _) => panic!("{path}: {link:?}"),
    }
    // Text from elsewhere, though equal, is never taken for the path's.
    let elsewhere = [Cow::Borrowed("dbs"), Cow::Borrowed("db1")];
    assert_eq!(slice_of("/dbs/db1", &elsewhere), None);
}

/// The stack-written token and payload are what the allocating ones give.
#[rstest]
#[case("type%3Dmaster%26ver%3D1%2E0%26sig%3Di4KBYcCs%2BMEjSy%2FQl2%3D")]
#[case("type=master&ver=1.0&sig=abc")]
#[case("%")]
#[case("a%4")]
#[case("%zz%2")]
#[case("a%20b%")]
#[case("%E9%B1%80x")]
#[case("%FF%FEnot UTF-8")]
#[case("%41")]
fn a_token_decoded_on_the_stack_is_the_decoded_token(#[case] token: &str) {
    let mut room = [0; TOKEN_ROOM];
    assert_eq!(decoded_in(token, &mut room), decoded(token));
    let long = format!("{token}{}", "%41".repeat(100));
    assert_eq!(decoded_in(&long, &mut room), decoded(&long));
}

#[rstest]
#[case(["GET", "docs", "dbs/D/colls/C/docs/A", DATE, ""])]
#[case(["post", "", "", DATE, "Tue, 01 Nov 2022 10:00:00 GMT"])]
#[case(["GET", "DOCS", "dbs/d/colls/c/docs/É", "Tue, 01 Nov 2022 10:00:00 GMT", ""])]
#[case(["GÉT", "docs", "dbs/d", DATE, ""])]
#[case(["GET", "docs", &"x".repeat(600), DATE, ""])]
fn a_payload_written_on_the_stack_is_the_payload(#[case] parts: [&str; 5]) {
    let [verb, resource_type, link, x_ms_date, date] = parts;
    let built = payload(verb, resource_type, link, x_ms_date, date);
    with_payload(parts, |written| assert_eq!(written, built.as_bytes()));
}

#[test]
fn a_path_with_a_control_character_is_400() {
    for path in [
        "/dbs/d/colls/c/docs/a%09b",
        "/dbs/d/colls/c/docs/a%0Db",
        "/dbs/d%0A",
    ] {
        assert_eq!(check_path(path).unwrap_err().status, Status::BAD_REQUEST);
    }
    for path in [
        "/dbs/d/colls/c/docs/a%20b",
        "/dbs/d/colls/c/docs/a",
        "/dbs/%E9%B1%80",
    ] {
        assert!(check_path(path).is_ok(), "{path}");
    }
}

#[test]
fn an_id_the_gateway_reads_otherwise_than_signed_is_401() {
    let key = MasterKey::from_base64(KEY).unwrap();
    for (id, sent) in [("Test ", "Test%20"), ("a%20", "a%2520"), ("a/b", "a%2Fb")] {
        let auth = signed("GET", "docs", &format!("dbs/d/colls/c/docs/{id}"));
        let path = format!("/dbs/d/colls/c/docs/{sent}");
        let request = SignedRequest {
            verb: "GET",
            path: &path,
            authorization: Some(&auth),
            x_ms_date: Some(DATE),
            date: None,
        };
        let refused = verify(&key, &request, signed_at()).unwrap_err();
        assert_eq!(refused.status, Status::UNAUTHORIZED, "{id:?}");
    }
}

#[test]
fn rid_paths_are_signed_with_the_lowercased_rid() {
    let r = signed_resource("/dbs/AbCdAA==/colls/AbCdAKl2Hq0=/docs");
    assert_eq!(r.resource_type, "docs");
    assert!(
        r.links.contains(&"abcdakl2hq0=".to_string()),
        "{:?}",
        r.links
    );
}

fn signed(verb: &str, ty: &str, link: &str) -> String {
    let key = MasterKey::from_base64(KEY).unwrap();
    authorization_header(&key, &payload(verb, ty, link, DATE, ""))
}

#[test]
fn accepts_a_correct_signature_and_refuses_a_wrong_one() {
    let key = MasterKey::from_base64(KEY).unwrap();
    let good = signed("GET", "docs", "dbs/db1/colls/c1/docs/a");
    fn request(auth: &str) -> SignedRequest<'_> {
        SignedRequest {
            verb: "GET",
            path: "/dbs/db1/colls/c1/docs/a",
            authorization: Some(auth),
            x_ms_date: Some(DATE),
            date: None,
        }
    }
    assert!(verify(&key, &request(&good), signed_at()).is_ok());
    let wrong_link = signed("GET", "docs", "dbs/db1/colls/c1/docs/b");
    let err = verify(&key, &request(&wrong_link), signed_at()).unwrap_err();
    assert_eq!(err.status.as_u16(), 401);
    assert!(
        err.message
            .contains("get\\ndocs\\ndbs/db1/colls/c1/docs/a\\ntue, 01 nov 2022 10:00:00 gmt\\n\\n"),
        "{}",
        err.message
    );
    let other_key = MasterKey::from_base64("c2VjcmV0").unwrap();
    let forged = authorization_header(
        &other_key,
        &payload("GET", "docs", "dbs/db1/colls/c1/docs/a", DATE, ""),
    );
    assert!(verify(&key, &request(&forged), signed_at()).is_err());
}

/// A signature computed independently (Python's hmac, as the Python SDK signs).
#[test]
fn known_answer() {
    let key = MasterKey::from_base64(KEY).unwrap();
    let p = payload("GET", "docs", "dbs/db1/colls/c1/docs/a", DATE, "");
    assert_eq!(key.sign(&p), "i4KBYcCsPMEjSyQl2MVdQl53mWi0fPX5GTJtFTHcJag=");
    assert_eq!(
        authorization_header(&key, &p),
        "type%3Dmaster%26ver%3D1%2E0%26sig%3Di4KBYcCsPMEjSyQl2MVdQl53mWi0fPX5GTJtFTHcJag%3D"
    );
}

#[test]
fn missing_header_and_missing_date_are_refused() {
    let key = MasterKey::from_base64(KEY).unwrap();
    let no_auth = SignedRequest {
        verb: "GET",
        path: "/",
        authorization: None,
        x_ms_date: Some(DATE),
        date: None,
    };
    assert!(verify(&key, &no_auth, signed_at())
        .unwrap_err()
        .message
        .contains("authorization"));
    let auth = signed("GET", "", "");
    let no_date = SignedRequest {
        verb: "GET",
        path: "/",
        authorization: Some(&auth),
        x_ms_date: None,
        date: None,
    };
    assert!(verify(&key, &no_date, signed_at())
        .unwrap_err()
        .message
        .contains("x-ms-date"));
}

fn signed_on(date: &str) -> (String, String) {
    let key = MasterKey::from_base64(KEY).unwrap();
    let auth = authorization_header(&key, &payload("GET", "dbs", "", date, ""));
    (auth, date.to_string())
}

fn check(date: &str, now: SystemTime) -> Result<(), ApiError> {
    let key = MasterKey::from_base64(KEY).unwrap();
    let (auth, date) = signed_on(date);
    let request = SignedRequest {
        verb: "GET",
        path: "/dbs",
        authorization: Some(&auth),
        x_ms_date: Some(&date),
        date: None,
    };
    verify(&key, &request, now)
}

/// The service's window: 15 minutes either way of the server's wall
/// clock, the boundary itself included; outside it, 403 with both times.
#[rstest]
#[case(0, true)]
#[case(15 * 60, true)]
#[case(-15 * 60, true)]
#[case(15 * 60 + 1, false)]
#[case(-15 * 60 - 1, false)]
#[case(365 * 24 * 3600, false)]
#[case(-30 * 60, false)]
fn dates_more_than_15_minutes_off_are_refused(#[case] server_ahead: i64, #[case] accepted: bool) {
    let now = if server_ahead >= 0 {
        signed_at() + Duration::from_secs(server_ahead as u64)
    } else {
        signed_at() - Duration::from_secs(server_ahead.unsigned_abs())
    };
    match check(DATE, now) {
        Ok(()) => assert!(accepted, "{server_ahead} s accepted"),
        Err(e) => {
            assert!(!accepted, "{server_ahead} s refused: {e}");
            assert_eq!(e.status.as_u16(), 403);
            assert_eq!(e.code(), "Forbidden");
            assert!(
                e.message
                    .contains("token start time: Tue, 01 Nov 2022 10:00:00 GMT")
                    && e.message
                        .contains("token expiry time: Tue, 01 Nov 2022 10:15:00 GMT"),
                "{}",
                e.message
            );
        }
    }
}

#[rstest]
#[case("yesterday")]
#[case("Tue, 32 Nov 2022 10:00:00 GMT")]
#[case("2022-11-01T10:00:00Z")]
fn unreadable_dates_are_401(#[case] date: &str) {
    let e = check(date, signed_at()).unwrap_err();
    assert_eq!(e.status.as_u16(), 401, "{e}");
    assert!(e.message.contains("RFC 1123"), "{}", e.message);
}

/// A wrong signature is reported as such even with a stale date: the
/// date is judged only on an authentic token.
#[test]
fn a_wrong_signature_is_401_whatever_the_date() {
    let key = MasterKey::from_base64("c2VjcmV0").unwrap();
    let auth = authorization_header(&key, &payload("GET", "dbs", "", DATE, ""));
    let request = SignedRequest {
        verb: "GET",
        path: "/dbs",
        authorization: Some(&auth),
        x_ms_date: Some(DATE),
        date: None,
    };
    let well_known = MasterKey::from_base64(KEY).unwrap();
    let e = verify(
        &well_known,
        &request,
        signed_at() + Duration::from_secs(86400),
    )
    .unwrap_err();
    assert_eq!(e.status.as_u16(), 401);
}
