//! Microsoft Entra ID tokens, as Microsoft's emulators accept them
//! (`/enableaadauthentication`): `authorization: type=aad&ver=1.0&sig=<jwt>`
//! where the JWT's signature part is the account key itself, base64url
//! without padding. The SDKs' own emulator tests build such tokens
//! (`CosmosEmulatorCredential` in the Python SDK's `test_aad.py`,
//! `emulatorTokenCredential` in the Go SDK's `emulator_test.go`), so that a
//! token credential's code path runs without a tenant.
//!
//! What the service allows a principal is its data plane only: items,
//! queries, the change feed, running stored procedures, and reading
//! metadata. Creating, replacing or deleting databases, containers,
//! scripts, users, permissions, offers and encryption keys is refused with
//! 403 and substatus 5300, as the service refuses it.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use percent_encoding::percent_decode_str;
use serde::Deserialize;

use crate::protocol::auth::{signed_resource, MasterKey};
use crate::protocol::error::{ApiError, ApiResult, Status};

/// The substatus of a request that a token's principal may not make.
pub const BLOCKED_BY_AUTH: u32 = 5300;

/// The JWT of an `authorization: type=aad&...` header, if it is one.
pub fn token(authorization: Option<&str>) -> Option<String> {
    let authorization = authorization?;
    // Nearly every request carries a master token: no decoding for them.
    if !authorization.contains("aad") {
        return None;
    }
    let decoded = percent_decode_str(authorization).decode_utf8_lossy();
    let mut is_aad = false;
    let mut signature = None;
    for part in decoded.split('&') {
        match part.split_once('=') {
            Some(("type", kind)) => is_aad = kind == "aad",
            Some(("sig", sig)) => signature = Some(sig.trim().to_string()),
            _ => {}
        }
    }
    is_aad.then(|| signature.unwrap_or_default())
}

/// The claims read from the token: its lifetime, in Unix seconds.
#[derive(Deserialize)]
struct Claims {
    exp: Option<f64>,
    nbf: Option<f64>,
}

/// Checks an Entra token (its signature part, its lifetime on the wall
/// clock, `now` in Unix seconds), then that its principal may make this
/// request (`verb`, `path`; `is_query`: a POST that queries).
pub fn verify(
    key: &MasterKey,
    jwt: &str,
    (verb, path, is_query): (&str, &str, bool),
    now: i64,
) -> ApiResult<()> {
    let parts: Vec<&str> = jwt.split('.').collect();
    let [_, claims, signature] = parts[..] else {
        return Err(ApiError::unauthorized(
            "The authorization token of type 'aad' is not a JSON web token: expected three \
             base64url parts separated by '.'.",
        ));
    };
    if !key.signs_emulator_token(signature) {
        return Err(ApiError::unauthorized(
            "The AAD token could not be validated: this emulator accepts the tokens of Microsoft's \
             emulator, whose signature part is the account key, base64url-encoded without padding \
             (as the SDKs' emulator credentials build them).",
        ));
    }
    let claims: Claims = URL_SAFE_NO_PAD
        .decode(claims.trim_end_matches('='))
        .ok()
        .and_then(|json| serde_json::from_slice(&json).ok())
        .ok_or_else(|| {
            ApiError::unauthorized(
                "The AAD token's claims (its second part) are not base64url-encoded JSON.",
            )
        })?;
    // The service allows five minutes of clock skew either way.
    const SKEW: f64 = 300.0;
    if claims.exp.is_some_and(|exp| exp + SKEW < now as f64) {
        return Err(ApiError::unauthorized(
            "The AAD token has expired (its 'exp' claim is in the past): get a new token.",
        ));
    }
    if claims.nbf.is_some_and(|nbf| nbf - SKEW > now as f64) {
        return Err(ApiError::unauthorized(
            "The AAD token is not valid yet (its 'nbf' claim is in the future).",
        ));
    }
    if manages_resources(verb, path, is_query) {
        return Err(ApiError::new(
            Status::FORBIDDEN,
            format!(
                "Request blocked by Auth localhost : The given request [{verb} {path}] cannot be \
             authorized by AAD token in data plane. Learn more: https://aka.ms/cosmos-native-rbac."
            ),
        )
        .with_substatus(BLOCKED_BY_AUTH));
    }
    Ok(())
}

/// Whether a request creates, replaces or deletes a resource other than an
/// item: what no data-plane role grants.
fn manages_resources(verb: &str, path: &str, is_query: bool) -> bool {
    if verb.eq_ignore_ascii_case("GET") || verb.eq_ignore_ascii_case("HEAD") || is_query {
        return false;
    }
    // Deleting a partition key's items is an item write.
    if path.ends_with("/operations/partitionkeydelete") {
        return false;
    }
    let resource = signed_resource(path);
    // `.../sprocs/{id}` names one; `.../sprocs` the collection.
    let names_one = path.split('/').filter(|s| !s.is_empty()).count() % 2 == 0;
    match resource.resource_type.as_str() {
        // Running a stored procedure is a data action; writing one is not.
        "sprocs" => !(verb.eq_ignore_ascii_case("POST") && names_one),
        "dbs"
        | "colls"
        | "udfs"
        | "triggers"
        | "users"
        | "permissions"
        | "offers"
        | "clientencryptionkeys" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::auth::WELL_KNOWN_KEY;

    const NOW: i64 = 1_700_000_000;

    fn jwt(claims: &str, key: &str) -> String {
        let header = r#"{"typ":"JWT","alg":"RS256","kid":"CosmosEmulatorPrimaryMaster"}"#;
        [header, claims, key]
            .map(|part| URL_SAFE_NO_PAD.encode(part))
            .join(".")
    }

    fn key() -> MasterKey {
        MasterKey::from_base64(WELL_KNOWN_KEY).unwrap()
    }

    #[test]
    fn reads_the_token_of_an_aad_header_only() {
        let header = "type%3Daad%26ver%3D1.0%26sig%3Da.b.c";
        assert_eq!(token(Some(header)).as_deref(), Some("a.b.c"));
        assert_eq!(token(Some("type=master&ver=1.0&sig=abc")), None);
        assert_eq!(token(None), None);
    }

    #[test]
    fn the_emulator_token_of_the_account_key_is_accepted_within_its_lifetime() {
        let claims = format!(r#"{{"nbf":{},"exp":{}}}"#, NOW - 10, NOW + 7200);
        let item_read = ("GET", "/dbs/d/colls/c/docs/a", false);
        assert!(verify(&key(), &jwt(&claims, WELL_KNOWN_KEY), item_read, NOW).is_ok());
        let other_key = "b3RoZXI=";
        let refused = verify(&key(), &jwt(&claims, other_key), item_read, NOW).unwrap_err();
        assert_eq!(refused.status.as_u16(), 401);
        let expired = verify(&key(), &jwt(&claims, WELL_KNOWN_KEY), item_read, NOW + 9000);
        assert_eq!(expired.unwrap_err().status.as_u16(), 401);
        let early = verify(&key(), &jwt(&claims, WELL_KNOWN_KEY), item_read, NOW - 1000);
        assert_eq!(early.unwrap_err().status.as_u16(), 401);
        let not_a_jwt = verify(&key(), "abc", item_read, NOW).unwrap_err();
        assert_eq!(not_a_jwt.status.as_u16(), 401);
    }

    #[test]
    fn the_data_plane_is_allowed_and_managing_resources_is_blocked() {
        let token = jwt("{}", WELL_KNOWN_KEY);
        for allowed in [
            ("GET", "/dbs/d/colls/c", false),
            ("GET", "/dbs", false),
            ("POST", "/dbs", true),
            ("POST", "/dbs/d/colls/c/docs", false),
            ("PUT", "/dbs/d/colls/c/docs/a", false),
            ("PATCH", "/dbs/d/colls/c/docs/a", false),
            ("DELETE", "/dbs/d/colls/c/docs/a", false),
            ("POST", "/dbs/d/colls/c/sprocs/s", false),
            (
                "POST",
                "/dbs/d/colls/c/operations/partitionkeydelete",
                false,
            ),
        ] {
            assert!(verify(&key(), &token, allowed, NOW).is_ok(), "{allowed:?}");
        }
        for blocked in [
            ("POST", "/dbs", false),
            ("DELETE", "/dbs/d", false),
            ("POST", "/dbs/d/colls", false),
            ("PUT", "/dbs/d/colls/c", false),
            ("POST", "/dbs/d/colls/c/sprocs", false),
            ("PUT", "/dbs/d/colls/c/udfs/u", false),
            ("PUT", "/offers/abc", false),
            ("POST", "/dbs/d/users", false),
        ] {
            let refused = verify(&key(), &token, blocked, NOW).unwrap_err();
            assert_eq!(refused.status.as_u16(), 403, "{blocked:?}");
            assert_eq!(refused.substatus, Some(BLOCKED_BY_AUTH));
        }
    }
}
