//! Throughput offers: the provisioned RU/s of a database (shared) or a
//! container (dedicated), manual or autoscale, in the service's offer shape
//! (`offerVersion` V2). Nothing is throttled: an offer is a setting the SDKs
//! read and replace, validated as the service validates it.
//!
//! As in the service (and Microsoft's emulator), a container created without
//! throughput in a database without shared throughput gets its own 400 RU/s
//! manual offer; a container in a shared-throughput database gets none unless
//! it asks for one, and neither does a database created without throughput.
//!
//! This file is what an offer is; the store's operations on the account's
//! offers are `offers.rs`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::item;
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::rid;

/// Manual throughput: 400 RU/s at least, in steps of 100.
pub const MIN_MANUAL_THROUGHPUT: u32 = 400;
const MANUAL_STEP: u32 = 100;
/// Autoscale: a maximum of 1000 RU/s at least, in steps of 1000; the
/// resource scales between a tenth of it and it.
const MIN_AUTOSCALE_MAX: u32 = 1000;
const AUTOSCALE_STEP: u32 = 1000;
/// What an account may set without asking support for more.
const MAX_THROUGHPUT: u32 = 1_000_000;
/// A manual offer migrated to autoscale gets at least this maximum (the
/// service's rule: max(4000, the manual RU/s rounded up to 1000)).
const MIGRATED_AUTOSCALE_FLOOR: u32 = 4000;

/// What a resource is provisioned with.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Throughput {
    Manual(u32),
    Autoscale {
        max: u32,
        /// `autoUpgradePolicy`, echoed back as given (the Python SDK sends
        /// and reads `throughputPolicy.incrementPercent`).
        auto_upgrade_policy: Option<Value>,
    },
}

impl Throughput {
    /// The throughput a create request asks for, from its headers
    /// (`x-ms-offer-throughput`, `x-ms-cosmos-offer-autopilot-settings`),
    /// validated; `None` when it asks for none.
    pub fn from_headers(manual: Option<&str>, autoscale: Option<&str>) -> ApiResult<Option<Self>> {
        let throughput = match (manual, autoscale) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => return Err(ApiError::bad_request(
                "Both x-ms-offer-throughput and x-ms-cosmos-offer-autopilot-settings were sent: \
                     provision either manual throughput or an autoscale maximum, not both.",
            )),
            (Some(manual), None) => Throughput::Manual(whole_number(
                manual.trim().parse::<i64>().ok(),
                MIN_MANUAL_THROUGHPUT,
                || {
                    format!(
                        "The x-ms-offer-throughput header must be a whole number of RU/s, e.g. 400, got '{manual}'."
                    )
                },
            )?),
            (None, Some(settings)) => {
                let parsed: Option<Map<String, Value>> = serde_json::from_str(settings).ok();
                let Some(parsed) = parsed else {
                    return Err(ApiError::bad_request(format!(
                        "The x-ms-cosmos-offer-autopilot-settings header must be a JSON object such as \
                         {{\"maxThroughput\": 4000}}, got '{settings}'."
                    )));
                };
                autoscale_from(&parsed, "the x-ms-cosmos-offer-autopilot-settings header")?
            }
        };
        throughput.validated().map(Some)
    }

    /// Refuses a value outside the service's range or off its steps, in the
    /// service's words.
    fn validated(self) -> ApiResult<Self> {
        let (value, min, step) = match &self {
            Throughput::Manual(n) => (*n, MIN_MANUAL_THROUGHPUT, MANUAL_STEP),
            Throughput::Autoscale { max, .. } => (*max, MIN_AUTOSCALE_MAX, AUTOSCALE_STEP),
        };
        if value < min {
            return Err(below_minimum(value.into(), min));
        }
        if value > MAX_THROUGHPUT || value % step != 0 {
            return Err(ApiError::bad_request(format!(
                "The offer should have valid throughput values between {min} and {MAX_THROUGHPUT} \
                 inclusive in increments of {step}. Got {value}."
            )));
        }
        Ok(self)
    }

    /// The RU/s the resource runs at now: manual, or autoscale's floor (a
    /// tenth of the maximum, since nothing here consumes throughput).
    fn current(&self) -> u32 {
        match self {
            Throughput::Manual(n) => *n,
            Throughput::Autoscale { max, .. } => max / 10,
        }
    }

    pub(crate) fn provisioned(&self) -> u32 {
        match self {
            Throughput::Manual(n) => *n,
            Throughput::Autoscale { max, .. } => *max,
        }
    }

    /// The least the resource may be set to (`x-ms-cosmos-min-throughput`).
    fn minimum(&self) -> u32 {
        match self {
            Throughput::Manual(_) => MIN_MANUAL_THROUGHPUT,
            Throughput::Autoscale { .. } => MIN_AUTOSCALE_MAX,
        }
    }
}

/// `{"maxThroughput": n, "autoUpgradePolicy": {...}}`, from a header or an
/// offer's `content.offerAutopilotSettings`.
fn autoscale_from(settings: &Map<String, Value>, source: &str) -> ApiResult<Throughput> {
    let max = whole_number(
        settings.get("maxThroughput").and_then(Value::as_i64),
        MIN_AUTOSCALE_MAX,
        || {
            format!(
            "The autoscale settings in {source} need 'maxThroughput', a whole number of RU/s such as \
             4000, got {}.",
            Value::Object(settings.clone())
        )
        },
    )?;
    let auto_upgrade_policy = settings
        .get("autoUpgradePolicy")
        .filter(|p| !p.is_null())
        .cloned();
    if auto_upgrade_policy.as_ref().is_some_and(|p| !p.is_object()) {
        return Err(ApiError::bad_request(format!(
            "The autoUpgradePolicy in {source} must be an object such as \
             {{\"throughputPolicy\": {{\"incrementPercent\": 10}}}}."
        )));
    }
    Ok(Throughput::Autoscale {
        max,
        auto_upgrade_policy,
    })
}

/// A non-negative number that fits RU/s (a larger one fails the range check).
/// A whole number of RU/s (`message` when it is none); a negative one is
/// below every minimum, refused as [`below_minimum`] words it.
fn whole_number(value: Option<i64>, min: u32, message: impl FnOnce() -> String) -> ApiResult<u32> {
    match value {
        Some(n) if n < 0 => Err(below_minimum(n, min)),
        Some(n) => Ok(u32::try_from(n).unwrap_or(u32::MAX)),
        None => Err(ApiError::bad_request(message())),
    }
}

/// The service's refusal of throughput under the minimum (the Python SDK's
/// `test_autoscale_create_container` looks for it).
fn below_minimum(value: i64, min: u32) -> ApiError {
    ApiError::bad_request(format!(
        "Requested throughput {value} is less than required minimum throughput {min}."
    ))
}

/// Which mode change a replace asks for, by its headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    None,
    /// `x-ms-cosmos-migrate-offer-to-autopilot: true`
    ToAutoscale,
    /// `x-ms-cosmos-migrate-offer-to-manual-throughput: true`
    ToManual,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Offer {
    rid: String,
    /// The `_self` of the database or container, e.g. `dbs/AQAAAA==/`.
    resource_link: String,
    /// Its `_rid`.
    resource_rid: String,
    throughput: Throughput,
    max_ever_provisioned: u32,
    ts: i64,
    etag: String,
    last_replaced: i64,
}

impl Offer {
    /// The `_rid` of the database or container it provisions.
    pub fn resource_rid(&self) -> &str {
        &self.resource_rid
    }

    pub(super) fn etag(&self) -> &str {
        &self.etag
    }

    /// Its RU/s: manual, or the autoscale maximum (what the throttle grants).
    pub fn provisioned(&self) -> u32 {
        self.throughput.provisioned()
    }

    /// Whether it is an autoscale offer (its partitions are laid out at
    /// 10,000 RU/s of its maximum, not 6,000).
    pub fn is_autoscale(&self) -> bool {
        matches!(self.throughput, Throughput::Autoscale { .. })
    }

    pub fn to_json(&self) -> Value {
        let mut content = json!({
            "offerThroughput": self.throughput.current(),
            "offerIsRUPerMinuteThroughputEnabled": false,
            "offerMinimumThroughputParameters": {
                "maxThroughputEverProvisioned": self.max_ever_provisioned,
                "maxConsumedStorageEverInKB": 0,
            },
            "offerLastReplaceTimestamp": self.last_replaced,
        });
        if let Throughput::Autoscale {
            max,
            auto_upgrade_policy,
        } = &self.throughput
        {
            let mut settings = json!({ "maxThroughput": max });
            if let Some(policy) = auto_upgrade_policy {
                settings["autoUpgradePolicy"] = policy.clone();
            }
            content["offerAutopilotSettings"] = settings;
        }
        json!({
            "resource": self.resource_link,
            "offerType": "Invalid",
            "offerResourceId": self.resource_rid,
            "offerVersion": "V2",
            "content": content,
            "id": self.rid,
            "_rid": self.rid,
            "_self": format!("offers/{}/", self.rid),
            "_etag": self.etag,
            "_ts": self.ts,
        })
    }

    /// The least RU/s the resource may be set to, for `x-ms-cosmos-min-throughput`.
    pub fn minimum_throughput(&self) -> u32 {
        self.throughput.minimum()
    }

    /// Applies a replace body (the offer as read, with its `content`
    /// changed) or a migration between manual and autoscale.
    pub(super) fn replace(
        &mut self,
        body: &Map<String, Value>,
        migration: Migration,
        now: i64,
    ) -> ApiResult<()> {
        for (field, expected) in [("id", &self.rid), ("offerResourceId", &self.resource_rid)] {
            if let Some(given) = body.get(field).filter(|v| !v.is_null()) {
                if given.as_str() != Some(expected.as_str()) {
                    return Err(ApiError::bad_request(format!(
                        "The offer's {field} {given} does not match the offer addressed by the URL, \
                         whose {field} is '{expected}': send the offer as read, with its content changed."
                    )));
                }
            }
        }
        if let Some(version) = body.get("offerVersion").filter(|v| !v.is_null()) {
            if *version != "V2" {
                return Err(ApiError::bad_request(format!(
                    "The offerVersion {version} is not supported: offers are 'V2' (user-defined throughput)."
                )));
            }
        }
        let Some(content) = body.get("content").and_then(Value::as_object) else {
            return Err(ApiError::bad_request(
                "The offer needs a 'content' object, e.g. {\"offerThroughput\": 400} or \
                 {\"offerAutopilotSettings\": {\"maxThroughput\": 4000}}.",
            ));
        };
        let autoscale_settings = content
            .get("offerAutopilotSettings")
            .filter(|s| !s.is_null());
        let next = match (migration, &self.throughput) {
            (Migration::ToAutoscale, Throughput::Manual(n)) => Throughput::Autoscale {
                max: n
                    .div_ceil(AUTOSCALE_STEP)
                    .saturating_mul(AUTOSCALE_STEP)
                    .clamp(MIGRATED_AUTOSCALE_FLOOR, MAX_THROUGHPUT),
                auto_upgrade_policy: None,
            },
            (Migration::ToManual, Throughput::Autoscale { max, .. }) => Throughput::Manual(*max),
            (Migration::ToAutoscale, Throughput::Autoscale { .. }) => {
                return Err(ApiError::bad_request(
                    "The offer already has autoscale throughput: replace its \
                     content.offerAutopilotSettings.maxThroughput without the migration header.",
                ))
            }
            (Migration::ToManual, Throughput::Manual(_)) => {
                return Err(ApiError::bad_request(
                    "The offer already has manual throughput: replace its content.offerThroughput \
                     without the migration header.",
                ))
            }
            (Migration::None, Throughput::Manual(_)) => {
                if autoscale_settings.is_some() {
                    return Err(ApiError::bad_request(
                        "Existing offer needs to be autoscale to be able to update autoscale. Please \
                         invoke migration API to migrate this offer (x-ms-cosmos-migrate-offer-to-autopilot: true).",
                    ));
                }
                Throughput::Manual(whole_number(
                    content.get("offerThroughput").and_then(Value::as_i64),
                    MIN_MANUAL_THROUGHPUT,
                    || {
                        format!(
                            "The offer's content needs 'offerThroughput', a whole number of RU/s such as 400, got {}.",
                            Value::Object(content.clone())
                        )
                    },
                )?)
                .validated()?
            }
            (Migration::None, Throughput::Autoscale { .. }) => {
                match autoscale_settings {
                    Some(Value::Object(settings)) => {
                        autoscale_from(settings, "the offer's content.offerAutopilotSettings")?
                            .validated()?
                    }
                    Some(other) => {
                        return Err(ApiError::bad_request(format!(
                            "The offer's content.offerAutopilotSettings must be an object such as \
                         {{\"maxThroughput\": 4000}}, got {other}."
                        )))
                    }
                    None => return Err(ApiError::bad_request(
                        "Updating offer to manually provisioned throughput is not allowed. Please \
                         invoke migration API to migrate this offer \
                         (x-ms-cosmos-migrate-offer-to-manual-throughput: true).",
                    )),
                }
            }
        };
        self.max_ever_provisioned = self.max_ever_provisioned.max(next.provisioned());
        self.throughput = next;
        self.ts = now;
        self.last_replaced = now;
        self.etag = item::new_etag();
        Ok(())
    }
}

/// Every offer of the account, by RID.
#[derive(Debug, Default)]
pub struct Offers {
    by_rid: BTreeMap<String, Offer>,
    next_number: u32,
}

impl Offers {
    /// Provisions `throughput` for the resource `resource_link` (its `_self`).
    pub fn create(
        &mut self,
        resource_link: String,
        resource_rid: String,
        throughput: Throughput,
        now: i64,
    ) {
        let rid = loop {
            self.next_number += 1;
            let rid = rid::offer(self.next_number);
            // RIDs go in URL paths: skip the few spelled with '+' or '-'.
            if !rid.contains(['+', '-']) {
                break rid;
            }
        };
        let offer = Offer {
            rid: rid.clone(),
            resource_link,
            resource_rid,
            max_ever_provisioned: throughput.provisioned(),
            throughput,
            ts: now,
            etag: item::new_etag(),
            last_replaced: now,
        };
        self.by_rid.insert(rid, offer);
    }

    /// Whether the resource with this `_rid` has an offer of its own.
    pub fn has_offer(&self, resource_rid: &str) -> bool {
        self.by_rid.values().any(|o| o.resource_rid == resource_rid)
    }

    /// Drops the offers of the resources whose `_self` starts with
    /// `link_prefix`: a database's link covers its containers.
    pub fn remove_under(&mut self, link_prefix: &str) {
        self.by_rid
            .retain(|_, o| !o.resource_link.starts_with(link_prefix));
    }

    pub(super) fn get(&self, rid: &str) -> ApiResult<&Offer> {
        self.by_rid.get(rid).ok_or_else(|| offer_not_found(rid))
    }

    pub(super) fn get_mut(&mut self, rid: &str) -> ApiResult<&mut Offer> {
        self.by_rid.get_mut(rid).ok_or_else(|| offer_not_found(rid))
    }

    // ---- the data directory (`durable/meta.rs`) --------------------------

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Offer)> {
        self.by_rid.iter()
    }

    /// The number of the last offer RID given out.
    pub fn next_number(&self) -> u32 {
        self.next_number
    }

    pub fn restore_next_number(&mut self, number: u32) {
        self.next_number = self.next_number.max(number);
    }

    pub fn restore(&mut self, rid: String, offer: Offer) {
        self.by_rid.insert(rid, offer);
    }

    pub fn forget(&mut self, rid: &str) {
        self.by_rid.remove(rid);
    }
}

/// The service's refusal of throughput in a serverless account.
pub fn serverless_refusal(resource: &str) -> ApiError {
    ApiError::bad_request(format!(
        "Setting offer throughput or autopilot on {resource} is not supported for serverless \
         accounts."
    ))
}

/// The service's refusal of an offer read or replace in a serverless account.
pub fn serverless_offers() -> ApiError {
    ApiError::bad_request("Reading or replacing offers is not supported for serverless accounts.")
}

fn offer_not_found(rid: &str) -> ApiError {
    ApiError::not_found().with_message(format!(
        "Resource Not Found: no offer has the RID '{rid}'; its database or container may have been \
         deleted. Query /offers for the offer of a resource."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_headers_are_validated_as_the_service_does() {
        assert_eq!(Throughput::from_headers(None, None), Ok(None));
        assert_eq!(
            Throughput::from_headers(Some("400"), None),
            Ok(Some(Throughput::Manual(400)))
        );
        for bad in ["300", "450", "1000100", "-400", "x", ""] {
            let error = Throughput::from_headers(Some(bad), None).unwrap_err();
            assert_eq!(error.status, 400, "{bad}");
        }
        assert_eq!(
            Throughput::from_headers(None, Some(r#"{"maxThroughput": 4000}"#)),
            Ok(Some(Throughput::Autoscale {
                max: 4000,
                auto_upgrade_policy: None
            }))
        );
        for bad in [
            r#"{"maxThroughput": 400}"#,
            r#"{"maxThroughput": 1500}"#,
            r#"{"maxThroughput": "4000"}"#,
            r#"{}"#,
            "4000",
        ] {
            let error = Throughput::from_headers(None, Some(bad)).unwrap_err();
            assert_eq!(error.status, 400, "{bad}");
        }
        assert!(Throughput::from_headers(Some("400"), Some(r#"{"maxThroughput": 4000}"#)).is_err());
    }

    fn offer(throughput: Throughput) -> Offer {
        let mut offers = Offers::default();
        offers.create("dbs/x/".into(), "x".into(), throughput, 1);
        offers.by_rid.into_values().next().unwrap()
    }

    #[test]
    fn migrations_follow_the_service() {
        let mut manual = offer(Throughput::Manual(400));
        let body = manual.to_json();
        manual
            .replace(body.as_object().unwrap(), Migration::ToAutoscale, 2)
            .unwrap();
        assert_eq!(
            manual.to_json()["content"]["offerAutopilotSettings"]["maxThroughput"],
            4000
        );
        assert_eq!(manual.to_json()["content"]["offerThroughput"], 400);
        let body = manual.to_json();
        manual
            .replace(body.as_object().unwrap(), Migration::ToManual, 3)
            .unwrap();
        assert_eq!(manual.throughput, Throughput::Manual(4000));
        let mut big = offer(Throughput::Manual(12_300));
        let body = big.to_json();
        big.replace(body.as_object().unwrap(), Migration::ToAutoscale, 2)
            .unwrap();
        assert_eq!(big.throughput.provisioned(), 13_000);
    }
}
