//! Time to live: the documentation's rules as pure functions.
//!
//! Everything that decides whether an item is alive lives here; the store
//! and the purge only ask. Rule numbers (R1-R12), table cells (E1.1-E3.3,
//! M1.1-M3.3) and stories (L1-L11) are those of the guide's reference page
//! `docs/src/reference/ttl-rules.md`, which gives each its source.

use serde_json::Value;

use crate::protocol::error::ApiError;

/// The largest TTL the service accepts (R9, seed 004).
pub const MAX_TTL: i64 = 2_147_483_647;

/// A valid TTL value, container default or item override (R2, R3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ttl {
    /// `-1`: never expires.
    Never,
    /// `n > 0`: expires `n` seconds after the last write.
    Seconds(i64),
}

impl Ttl {
    /// The wire value.
    pub fn to_i64(self) -> i64 {
        match self {
            Ttl::Never => -1,
            Ttl::Seconds(n) => n,
        }
    }
}

/// An integer in `{-1} ∪ [1, MAX_TTL]`, or `None` for anything else.
fn parse_ttl(value: &Value) -> Option<Ttl> {
    match value.as_i64()? {
        -1 => Some(Ttl::Never),
        n if (1..=MAX_TTL).contains(&n) => Some(Ttl::Seconds(n)),
        _ => None,
    }
}

/// How a value looks in an error message: numbers and literals as JSON,
/// strings without their quotes (the service writes `The input ttl 'abc'`).
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Validates a container's `defaultTtl` property (R2, R9).
///
/// `None` (property absent) and JSON `null` both mean "TTL off" (R2, R8).
pub fn container_default_ttl(value: Option<&Value>) -> Result<Option<Ttl>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => parse_ttl(v).map(Some).ok_or_else(|| {
            ApiError::bad_request(format!(
                "The input defaultTtl '{}' is invalid. The container property 'defaultTtl' must be -1 \
                 (time to live on, items never expire by default), or a nonzero positive integer number \
                 of seconds less than or equal to '{MAX_TTL}', or absent or null to turn time to live off.",
                shown(v)
            ))
        }),
    }
}

/// Validates an item's `ttl` property (R3, R9). An explicit JSON `null` is
/// invalid: SDK nulls are serialised as an absent property
/// (`docs/src/reference/protocol.md#errors`).
/// Items are validated whether or not the container has TTL on.
pub fn item_ttl(value: Option<&Value>) -> Result<Option<Ttl>, ApiError> {
    match value {
        None => Ok(None),
        Some(v) => parse_ttl(v).map(Some).ok_or_else(|| {
            ApiError::bad_request(format!(
                "The input ttl '{}' is invalid. Ensure to provide a nonzero positive integer less than \
                 or equal to '{MAX_TTL}', or '-1' which means never expire.",
                shown(v)
            ))
        }),
    }
}

/// The epoch second at which an item written at `ts` expires, or `None` if it
/// never does under the container's current settings (R2, R3, R8).
pub fn expires_at(container_default: Option<Ttl>, item: Option<Ttl>, ts: i64) -> Option<i64> {
    // R3, R8: without a container default, item values are not interpreted.
    container_default?;
    match item.or(container_default)? {
        Ttl::Never => None,
        Ttl::Seconds(n) => Some(ts.saturating_add(n)),
    }
}

/// R4: expired from the instant `_ts + ttl <= now` on.
pub fn is_expired(container_default: Option<Ttl>, item: Option<Ttl>, ts: i64, now: i64) -> bool {
    expires_at(container_default, item, ts).is_some_and(|at| at <= now)
}

/// Which rule of the documentation decides an item's lifetime (R2, R3, R8):
/// what the data explorer shows beside each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The container has no `defaultTtl`: TTL is off and the item's own
    /// `ttl`, if any, is not interpreted (E1, M1.1, M2.1, M3.1).
    Off,
    /// The item has no `ttl`: the container's default applies (E2.1, E3.1).
    ContainerDefault,
    /// The item's `ttl` overrides the container's default (E2.2-E3.3).
    ItemOverride,
}

impl Rule {
    /// The rule's name on the wire (`/_emulator/expiry`).
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Off => "off",
            Rule::ContainerDefault => "container-default",
            Rule::ItemOverride => "item-override",
        }
    }
}

/// An item's lifetime, explained: the rule, the TTL in force (`None`: TTL
/// off) and the instant it expires (`None`: never). The instant is
/// [`expires_at`]'s, so an explanation never disagrees with the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expiry {
    pub rule: Rule,
    pub effective: Option<Ttl>,
    pub expires_at: Option<i64>,
}

/// Explains the lifetime of an item written at `ts`.
pub fn explain(container_default: Option<Ttl>, item: Option<Ttl>, ts: i64) -> Expiry {
    let (rule, effective) = match (container_default, item) {
        (None, _) => (Rule::Off, None),
        (Some(default), None) => (Rule::ContainerDefault, Some(default)),
        (Some(_), Some(own)) => (Rule::ItemOverride, Some(own)),
    };
    Expiry {
        rule,
        effective,
        expires_at: expires_at(container_default, item, ts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    const N: Option<Ttl> = None;
    const NEVER: Option<Ttl> = Some(Ttl::Never);
    const fn secs(n: i64) -> Option<Ttl> {
        Some(Ttl::Seconds(n))
    }

    /// The example tables E1-E3 (seeds 000, 004) and the matrix M1-M3
    /// (seeds 001-003; `docs/src/reference/ttl-rules.md#seeds`): expiry
    /// instant for an item written at ts = 100.
    #[rstest]
    #[case::e1_1_m1_1(N, N, None)]
    #[case::e1_2_m2_1(N, NEVER, None)]
    #[case::e1_3_m3_1(N, secs(2000), None)]
    #[case::e2_1_m1_2(NEVER, N, None)]
    #[case::e2_2_m2_2(NEVER, NEVER, None)]
    #[case::e2_3_m3_2(NEVER, secs(2000), Some(2100))]
    #[case::e3_1_m1_3(secs(1000), N, Some(1100))]
    #[case::e3_2_m2_3(secs(1000), NEVER, None)]
    #[case::e3_3_m3_3(secs(1000), secs(2000), Some(2100))]
    #[case::item_shorter_than_default(secs(1000), secs(10), Some(110))]
    fn expiry_instant(
        #[case] default: Option<Ttl>,
        #[case] item: Option<Ttl>,
        #[case] expected: Option<i64>,
    ) {
        assert_eq!(expires_at(default, item, 100), expected);
    }

    /// Every cell of E1-E3 and M1-M3, explained: the rule, the TTL in force
    /// and the instant (ts = 100), as the explorer shows them.
    #[rstest]
    #[case::e1_1_m1_1(N, N, Rule::Off, N, None)]
    #[case::e1_2_m2_1(N, NEVER, Rule::Off, N, None)]
    #[case::e1_3_m3_1(N, secs(2000), Rule::Off, N, None)]
    #[case::e2_1_m1_2(NEVER, N, Rule::ContainerDefault, NEVER, None)]
    #[case::e2_2_m2_2(NEVER, NEVER, Rule::ItemOverride, NEVER, None)]
    #[case::e2_3_m3_2(NEVER, secs(2000), Rule::ItemOverride, secs(2000), Some(2100))]
    #[case::e3_1_m1_3(secs(1000), N, Rule::ContainerDefault, secs(1000), Some(1100))]
    #[case::e3_2_m2_3(secs(1000), NEVER, Rule::ItemOverride, NEVER, None)]
    #[case::e3_3_m3_3(secs(1000), secs(2000), Rule::ItemOverride, secs(2000), Some(2100))]
    fn explained(
        #[case] default: Option<Ttl>,
        #[case] item: Option<Ttl>,
        #[case] rule: Rule,
        #[case] effective: Option<Ttl>,
        #[case] at: Option<i64>,
    ) {
        let expiry = explain(default, item, 100);
        assert_eq!(
            expiry,
            Expiry {
                rule,
                effective,
                expires_at: at
            }
        );
        assert_eq!(expiry.expires_at, expires_at(default, item, 100));
    }

    /// R4 / L8: visible the second before `_ts + ttl`, gone at it.
    #[rstest]
    #[case(1099, false)]
    #[case(1100, true)]
    #[case(1101, true)]
    fn boundary_second(#[case] now: i64, #[case] expired: bool) {
        assert_eq!(is_expired(secs(1000), N, 100, now), expired);
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        assert_eq!(expires_at(secs(MAX_TTL), N, i64::MAX - 1), Some(i64::MAX));
    }

    #[rstest]
    #[case(json!(-1), Ttl::Never)]
    #[case(json!(1), Ttl::Seconds(1))]
    #[case(json!(2000), Ttl::Seconds(2000))]
    #[case(json!(2_147_483_647), Ttl::Seconds(MAX_TTL))]
    fn valid_values(#[case] value: Value, #[case] expected: Ttl) {
        assert_eq!(item_ttl(Some(&value)).unwrap(), Some(expected));
        assert_eq!(container_default_ttl(Some(&value)).unwrap(), Some(expected));
    }

    /// R9: each invalid value, on items and on containers.
    #[rstest]
    #[case(json!(0))]
    #[case(json!(-2))]
    #[case(json!(-100))]
    #[case(json!(1.5))]
    #[case(json!(10.0))]
    #[case(json!(2_147_483_648_i64))]
    #[case(json!(1e300))]
    #[case(json!("100"))]
    #[case(json!(true))]
    #[case(json!([1]))]
    #[case(json!({"seconds": 1}))]
    fn invalid_values(#[case] value: Value) {
        let item = item_ttl(Some(&value)).unwrap_err();
        assert_eq!(item.status.as_u16(), 400);
        assert!(
            item.message.starts_with("The input ttl '"),
            "{}",
            item.message
        );
        let container = container_default_ttl(Some(&value)).unwrap_err();
        assert_eq!(container.status.as_u16(), 400);
        assert!(
            container.message.contains("defaultTtl"),
            "{}",
            container.message
        );
    }

    #[test]
    fn item_message_is_the_services_own_text() {
        let err = item_ttl(Some(&json!(0))).unwrap_err();
        assert_eq!(
            err.message,
            "The input ttl '0' is invalid. Ensure to provide a nonzero positive integer less than \
             or equal to '2147483647', or '-1' which means never expire."
        );
    }

    /// R3: an explicit null on an item is refused; on a container it turns TTL off (R2, R8).
    #[test]
    fn null_is_refused_on_items_and_means_off_on_containers() {
        assert!(item_ttl(Some(&Value::Null)).is_err());
        assert_eq!(item_ttl(None).unwrap(), None);
        assert_eq!(container_default_ttl(Some(&Value::Null)).unwrap(), None);
        assert_eq!(container_default_ttl(None).unwrap(), None);
    }
}
