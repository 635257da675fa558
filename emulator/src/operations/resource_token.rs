//! Resource tokens: what a read of a permission hands out, and what a
//! client then sends as `authorization: type=resource&ver=1.0&sig=<token>`.
//!
//! The service's tokens are opaque; the emulator's are `<claims>.<mac>`,
//! both base64url without padding: `claims` is the JSON of the permission's
//! grant (mode, database and container RIDs, item id, partition key), its
//! RID and the expiry instant in emulator-clock seconds; `mac` is
//! HMAC-SHA256 under the account key over `resource-token\n<claims>`. A token
//! is therefore checked without the store (so deleting or replacing the
//! permission does not recall tokens already handed out), cannot be forged
//! or altered without the key, and expires on the emulator's clock, so that
//! tests can expire it by moving the manual clock.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};

use crate::data::store::Grant;
use crate::protocol::auth::MasterKey;
use crate::protocol::error::{ApiError, ApiResult};

/// How long a token lives unless `x-ms-documentdb-expiry-seconds` says otherwise.
pub const DEFAULT_EXPIRY_SECONDS: i64 = 3600;
/// The shortest and longest lifetimes the service accepts (observed: below
/// 10 minutes or above 24 hours it answers 400).
pub const MIN_EXPIRY_SECONDS: i64 = 600;
pub const MAX_EXPIRY_SECONDS: i64 = 86_400;

/// What a token says, and the MAC vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    #[serde(flatten)]
    pub grant: Grant,
    /// The permission the token was issued for.
    pub permission_rid: String,
    /// The emulator-clock instant (seconds) from which the token is refused.
    pub expires_at: i64,
}

fn mac_payload(claims: &str) -> String {
    format!("resource-token\n{claims}")
}

/// The `_token` of a permission: the whole `type=resource&ver=1.0&sig=...`
/// string, which the SDKs send as the `authorization` header.
pub fn issue(key: &MasterKey, claims: &Claims) -> String {
    let json = serde_json::to_vec(claims).expect("claims serialise");
    let claims = URL_SAFE_NO_PAD.encode(json);
    let mac = STANDARD
        .decode(key.sign(&mac_payload(&claims)))
        .expect("sign returns base64");
    format!(
        "type=resource&ver=1.0&sig={claims}.{}",
        URL_SAFE_NO_PAD.encode(mac)
    )
}

/// The token of an `authorization` header (percent-encoded or not), when
/// it is a resource token; `None` for any other kind.
pub fn signature(authorization: Option<&str>) -> Option<String> {
    let authorization = authorization?;
    // Nearly every request carries a master token: skip decoding it here
    // (`auth::verify` does). A resource token names its kind in letters,
    // which no client percent-encodes.
    if !authorization.contains("resource") {
        return None;
    }
    let decoded = percent_decode_str(authorization).decode_utf8_lossy();
    let mut is_resource = false;
    let mut signature = None;
    for part in decoded.split('&') {
        match part.split_once('=') {
            Some(("type", kind)) => is_resource = kind == "resource",
            Some(("sig", sig)) => signature = Some(sig.trim().to_string()),
            _ => {}
        }
    }
    is_resource.then(|| signature.unwrap_or_default())
}

/// The claims of an authentic token that has not expired at `now`
/// (emulator-clock seconds). A token that was not issued by this emulator
/// with this key, or was altered, is a 401; so is an expired one.
pub fn verify(key: &MasterKey, token: &str, now: i64) -> ApiResult<Claims> {
    let forged = || {
        ApiError::unauthorized(
            "The input authorization token can't serve the request. The resource token is not one \
             this emulator issued with its key, or it was altered: read the permission again for a \
             fresh '_token' and send it whole as the authorization header.",
        )
    };
    let (claims, mac) = token.split_once('.').ok_or_else(forged)?;
    let mac = URL_SAFE_NO_PAD.decode(mac).map_err(|_| forged())?;
    if !key.verifies(mac_payload(claims).as_bytes(), &mac) {
        return Err(forged());
    }
    let json = URL_SAFE_NO_PAD.decode(claims).map_err(|_| forged())?;
    let claims: Claims = serde_json::from_slice(&json).map_err(|_| forged())?;
    if now >= claims.expires_at {
        return Err(ApiError::unauthorized(format!(
            "The authorization token is not valid at the current time: the resource token of the \
             permission '{}' expired at {} (emulator clock), and the current time is {}. Read the \
             permission again for a new token.",
            claims.permission_rid,
            instant(claims.expires_at),
            instant(now)
        )));
    }
    Ok(claims)
}

fn instant(seconds: i64) -> String {
    u64::try_from(seconds)
        .ok()
        .and_then(|s| std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(s)))
        .map_or_else(|| seconds.to_string(), httpdate::fmt_http_date)
}

/// The lifetime `x-ms-documentdb-expiry-seconds` asks for, in the service's limits.
pub fn expiry_seconds(header: Option<&str>) -> ApiResult<i64> {
    let Some(value) = header else {
        return Ok(DEFAULT_EXPIRY_SECONDS);
    };
    match value.trim().parse::<i64>() {
        Ok(s) if (MIN_EXPIRY_SECONDS..=MAX_EXPIRY_SECONDS).contains(&s) => Ok(s),
        _ => Err(ApiError::bad_request(format!(
            "Value '{value}' specified for the header 'x-ms-documentdb-expiry-seconds' is invalid: \
             a resource token lives from {MIN_EXPIRY_SECONDS} to {MAX_EXPIRY_SECONDS} seconds \
             (default {DEFAULT_EXPIRY_SECONDS})."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::store::PermissionMode;

    fn claims() -> Claims {
        Claims {
            grant: Grant {
                mode: PermissionMode::Read,
                database_rid: "AQAAAA==".into(),
                container_rid: "AQAAAIAAAAE=".into(),
                item_id: None,
                partition_key: Some("[\"a\"]".into()),
                script: None,
            },
            permission_rid: "AQAAAAAAAAEAAAAAAAAAAQ==".into(),
            expires_at: 1000,
        }
    }

    #[test]
    fn a_token_round_trips_until_it_expires() {
        let key = MasterKey::from_base64(crate::protocol::auth::WELL_KNOWN_KEY).unwrap();
        let token = issue(&key, &claims());
        let sig = signature(Some(&token)).unwrap();
        assert_eq!(verify(&key, &sig, 999).unwrap(), claims());
        let expired = verify(&key, &sig, 1000).unwrap_err();
        assert_eq!(expired.status.as_u16(), 401);
        // Percent-encoded, as the SDKs send it.
        let encoded =
            percent_encoding::utf8_percent_encode(&token, percent_encoding::NON_ALPHANUMERIC)
                .to_string();
        assert_eq!(signature(Some(&encoded)).as_deref(), Some(sig.as_str()));
        assert_eq!(signature(Some("type=master&ver=1.0&sig=abc")), None);
    }

    #[test]
    fn altered_or_foreign_tokens_are_refused() {
        let key = MasterKey::from_base64(crate::protocol::auth::WELL_KNOWN_KEY).unwrap();
        let sig = signature(Some(&issue(&key, &claims()))).unwrap();
        let mut longer = claims();
        longer.expires_at = i64::MAX;
        let longer_claims = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&longer).unwrap());
        let mac = sig.split_once('.').unwrap().1;
        for bad in [
            format!("{longer_claims}.{mac}"),
            sig.replace('.', ""),
            String::new(),
            "x.y".into(),
        ] {
            assert_eq!(
                verify(&key, &bad, 0).unwrap_err().status.as_u16(),
                401,
                "{bad}"
            );
        }
        let other = MasterKey::from_base64("c2VjcmV0").unwrap();
        assert!(verify(&other, &sig, 0).is_err());
    }
}
