//! A container's settings as a client sets them on create and replace:
//! read and validated here (partition key, TTL, indexing, change feed
//! retention, computed properties, unique keys, client encryption, vector
//! embedding and full-text policies), kept on the container, served back in
//! the service's shape.

use serde_json::{Map, Value};

use crate::data::index::indexing_policy;
use crate::data::index::search_policy::{self, FullTextPolicy, VectorEmbeddingPolicy};
use crate::data::query::{search, ComputedProperties};
use crate::data::store::encryption_policy::EncryptionPolicy;
use crate::data::store::unique_keys::UniqueKeyPolicy;
use crate::data::ttl::{self, Ttl};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::partition_key::PartitionKeyDefinition;

/// A container's settings as a client sets them (create and replace).
#[derive(Debug, Clone)]
pub struct ContainerSettings {
    pub partition_key: PartitionKeyDefinition,
    pub default_ttl: Option<Ttl>,
    pub indexing_policy: Value,
    /// Whether writes index items (the indexing mode is not `none`): read
    /// on every write's charge, so kept rather than looked up.
    pub indexes_writes: bool,
    /// `changeFeedPolicy.retentionDuration`, in seconds: how long this
    /// container's change log keeps entries; `None`: `--change-feed-retention`.
    pub change_feed_retention: Option<i64>,
    /// `computedProperties`, validated (served back as given, from `extra`).
    pub computed_properties: ComputedProperties,
    /// `uniqueKeyPolicy`, validated (served back as given, from `extra`).
    pub unique_keys: UniqueKeyPolicy,
    /// `clientEncryptionPolicy`, validated (served back in the service's
    /// shape, from `extra`).
    pub encryption_policy: Option<EncryptionPolicy>,
    /// `vectorEmbeddingPolicy`, validated (served back as given, from `extra`).
    pub vector_embeddings: VectorEmbeddingPolicy,
    /// `fullTextPolicy`, validated (served back as given, from `extra`).
    pub full_text: FullTextPolicy,
    /// Other client properties, echoed back unchanged (e.g. `uniqueKeyPolicy`).
    pub extra: Map<String, Value>,
}

impl ContainerSettings {
    /// The policies a query's search functions read (`data/query/search`).
    pub fn search_policies(&self) -> search::Policies {
        search::Policies {
            vectors: self.vector_embeddings.clone(),
            full_text: self.full_text.clone(),
        }
    }

    /// Reads and validates a container body (R2, R9, R10).
    pub fn parse(body: &Map<String, Value>) -> ApiResult<Self> {
        Self::read(body, Checks::All)
    }

    /// Reads a container body the data directory kept (`restore.rs`): it
    /// passed the checks of its day, so the search policies' checks, added
    /// later, do not stop it from opening (what they refuse is left out of
    /// `vector_embeddings` and `full_text`, and still served as stored).
    pub fn parse_stored(body: &Map<String, Value>) -> ApiResult<Self> {
        Self::read(body, Checks::Stored)
    }

    fn read(body: &Map<String, Value>, checks: Checks) -> ApiResult<Self> {
        let partition_key = PartitionKeyDefinition::parse(body.get("partitionKey"))?;
        let default_ttl = ttl::container_default_ttl(body.get("defaultTtl"))?;
        let indexing_policy = indexing_policy::parse(body.get("indexingPolicy"))?;
        if indexing_policy::is_mode_none(&indexing_policy) && default_ttl.is_some() {
            return Err(ApiError::bad_request(
                "The container cannot have a defaultTtl while its indexing policy has indexingMode 'none': \
                 time to live needs indexing mode 'consistent' or 'lazy' (R10). Remove defaultTtl or change the indexing mode.",
            ));
        }
        let (vector_embeddings, full_text) = match checks {
            Checks::All => {
                let vector_embeddings =
                    VectorEmbeddingPolicy::parse(body.get("vectorEmbeddingPolicy"))?;
                let full_text = FullTextPolicy::parse(body.get("fullTextPolicy"))?;
                search_policy::check_indexes(&indexing_policy, &vector_embeddings, &full_text)?;
                (vector_embeddings, full_text)
            }
            Checks::Stored => (
                VectorEmbeddingPolicy::parse_stored(body.get("vectorEmbeddingPolicy")),
                FullTextPolicy::parse_stored(body.get("fullTextPolicy")),
            ),
        };
        let change_feed_retention = change_feed_retention(body.get("changeFeedPolicy"))?;
        let computed_properties = ComputedProperties::parse(body.get("computedProperties"))?;
        let unique_keys = UniqueKeyPolicy::parse(body.get("uniqueKeyPolicy"))?;
        let encryption_policy =
            EncryptionPolicy::parse(body.get("clientEncryptionPolicy"), &partition_key)?;
        let mut extra = body.clone();
        match &encryption_policy {
            Some(policy) => extra.insert("clientEncryptionPolicy".into(), policy.to_json()),
            None => extra.remove("clientEncryptionPolicy"),
        };
        for owned in ["id", "partitionKey", "defaultTtl", "indexingPolicy"] {
            extra.remove(owned);
        }
        for system in [
            "_rid",
            "_self",
            "_etag",
            "_ts",
            "_docs",
            "_sprocs",
            "_triggers",
            "_udfs",
            "_conflicts",
        ] {
            extra.remove(system);
        }
        Ok(ContainerSettings {
            partition_key,
            default_ttl,
            indexes_writes: !indexing_policy::is_mode_none(&indexing_policy),
            indexing_policy,
            change_feed_retention,
            computed_properties,
            unique_keys,
            encryption_policy,
            vector_embeddings,
            full_text,
            extra,
        })
    }
}

/// Which checks a body passes: a client's all of them, a stored one those
/// it passed when it was stored.
#[derive(Clone, Copy)]
enum Checks {
    All,
    Stored,
}

/// Reads a container's `changeFeedPolicy` (`{"retentionDuration": minutes}`,
/// as the SDKs send it; kept in `extra` and served back as given): the
/// retention in seconds, `None` for none or 0 (the latest-version policy).
fn change_feed_retention(policy: Option<&Value>) -> ApiResult<Option<i64>> {
    let Some(policy) = policy.filter(|p| !p.is_null()) else {
        return Ok(None);
    };
    let minutes = match policy.as_object().map(|p| p.get("retentionDuration")) {
        Some(None | Some(Value::Null)) => Some(0),
        Some(Some(minutes)) => minutes.as_i64().filter(|m| *m >= 0),
        None => None,
    }
    .ok_or_else(|| {
        ApiError::bad_request(format!(
            "The changeFeedPolicy {policy} is invalid: it is an object whose retentionDuration is a \
             whole number of minutes, 0 or more, e.g. {{\"retentionDuration\": 10}}."
        ))
    })?;
    Ok((minutes > 0).then(|| minutes.saturating_mul(60)))
}

#[cfg(test)]
mod tests;
