//! The indexes that name the search policies' paths (`vectorIndexes` and
//! `fullTextIndexes` in the indexing policy), checked against the policies
//! of the same request, and what a container replace may change of them.

use serde_json::{json, Map, Value};

use super::{is_property_path, shown, FullTextPolicy, VectorEmbeddingPolicy, MAX_DIMENSIONS};
use crate::protocol::error::{ApiError, ApiResult};

/// The most dimensions a flat index may hold.
const MAX_FLAT_DIMENSIONS: u32 = 505;
/// `quantizationByteSize` is at most this, and at most the dimensions.
const MAX_QUANTIZATION_BYTES: u64 = 512;
/// The range of a diskANN index's `indexingSearchListSize`.
const SEARCH_LIST_SIZES: (u64, u64) = (25, 500);
/// How many paths a vector index's `vectorIndexShardKey` may list.
const MAX_SHARD_PATHS: usize = 1;

/// The kinds of vector index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VectorIndexType {
    Flat,
    QuantizedFlat,
    DiskAnn,
}

impl VectorIndexType {
    fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "flat" => Some(Self::Flat),
            "quantizedflat" => Some(Self::QuantizedFlat),
            "diskann" => Some(Self::DiskAnn),
            _ => None,
        }
    }
}

/// Checks a normalised indexing policy's `vectorIndexes` and
/// `fullTextIndexes` against the container's policies (both indexes are
/// echoed as sent: the checks change nothing).
pub(crate) fn check_indexes(
    indexing_policy: &Value,
    embeddings: &VectorEmbeddingPolicy,
    full_text: &FullTextPolicy,
) -> ApiResult<()> {
    let mut indexed: Vec<&str> = Vec::new();
    for entry in list(indexing_policy.get("vectorIndexes")) {
        let path = check_vector_index(entry, embeddings)?;
        if indexed.contains(&path) {
            return Err(ApiError::bad_request(format!(
                "The Vector Indexing Policy has more than one index on path::{path}: a vector \
                 path has one index."
            )));
        }
        indexed.push(path);
    }
    for (n, entry) in list(indexing_policy.get("fullTextIndexes"))
        .iter()
        .enumerate()
    {
        check_full_text_index(n, entry, full_text)?;
    }
    Ok(())
}

/// The entries of an index list (indexing_policy.rs has checked that it is one).
fn list(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Checks one entry of `vectorIndexes`; returns its path.
fn check_vector_index<'a>(
    entry: &'a Value,
    embeddings: &VectorEmbeddingPolicy,
) -> ApiResult<&'a str> {
    let Some(fields) = entry.as_object() else {
        return Err(ApiError::bad_request(format!(
            "The Vector Indexing Policy is invalid: each entry of 'vectorIndexes' is an object \
             such as {{\"path\": \"/vector1\", \"type\": \"diskANN\"}}, got {entry}."
        )));
    };
    let Some(path) = fields.get("path").and_then(Value::as_str) else {
        return Err(ApiError::bad_request(format!(
            "The Vector Indexing Policy is invalid: the vector index {entry} has no 'path', the \
             path of one of the vectorEmbeddingPolicy's embeddings, e.g. \"/vector1\"."
        )));
    };
    let kind = fields.get("type");
    let Some(kind) = kind
        .and_then(Value::as_str)
        .and_then(VectorIndexType::parse)
    else {
        return Err(ApiError::bad_request(format!(
            "The Vector Indexing Policy's Index Type::{} is invalid. Supported types are flat, \
             quantizedFlat and diskANN (the 'type' of the vector index on {path}).",
            shown(kind)
        )));
    };
    let Some(embedding) = embeddings.for_path(path) else {
        let known: Vec<&str> = embeddings
            .embeddings
            .iter()
            .map(|e| e.path.as_str())
            .collect();
        return Err(ApiError::bad_request(format!(
            "The Vector Indexing Policy's path::{path} not matching in Embedding's path. A vector \
             index's 'path' is the path of an embedding of the container's vectorEmbeddingPolicy \
             ({}).",
            listed(&known)
        )));
    };
    let dimensions = embedding.dimensions;
    if kind == VectorIndexType::Flat && dimensions > MAX_FLAT_DIMENSIONS {
        return Err(ApiError::bad_request(format!(
            "The Vector Indexing Policy's path::{path} has Index Type::flat, which supports at \
             most {MAX_FLAT_DIMENSIONS} dimensions, but its embedding has Dimensions:{dimensions}. \
             Use quantizedFlat or diskANN (up to {MAX_DIMENSIONS} dimensions)."
        )));
    }
    match fields.get("quantizerType") {
        None | Some(Value::Null) => {}
        Some(Value::String(q))
            if q.eq_ignore_ascii_case("product") || q.eq_ignore_ascii_case("spherical") => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "The Vector Indexing Policy has an invalid QuantizerType:{}. Supported types are \
                 product and spherical (the 'quantizerType' of the vector index on {path}).",
                shown(Some(other))
            )))
        }
    }
    if kind != VectorIndexType::Flat {
        let most = u64::from(dimensions).min(MAX_QUANTIZATION_BYTES);
        check_range(fields, path, "quantizationByteSize", (1, most))?;
    }
    if kind == VectorIndexType::DiskAnn {
        check_range(fields, path, "indexingSearchListSize", SEARCH_LIST_SIZES)?;
    }
    check_shard_key(fields, path)?;
    Ok(path)
}

/// The paths a policy has, for a message.
fn listed(paths: &[&str]) -> String {
    if paths.is_empty() {
        "this request has none".to_string()
    } else {
        format!("it has {}", paths.join(", "))
    }
}

/// An optional whole-number parameter `field` of the vector index on
/// `path`, within `low..=high`.
fn check_range(
    fields: &Map<String, Value>,
    path: &str,
    field: &str,
    (low, high): (u64, u64),
) -> ApiResult<()> {
    let Some(value) = fields.get(field).filter(|v| !v.is_null()) else {
        return Ok(());
    };
    if value.as_u64().is_some_and(|n| (low..=high).contains(&n)) {
        return Ok(());
    }
    // The service names the parameter in upper camel case.
    let name = format!("{}{}", field[..1].to_ascii_uppercase(), &field[1..]);
    Err(ApiError::bad_request(format!(
        "The Vector Indexing Policy parameter {name} value :: {value} is out of range. The \
         allowed range is between {low} and {high}. It is the '{field}' of the vector index on \
         {path}, a whole number."
    )))
}

/// `vectorIndexShardKey`: at most [`MAX_SHARD_PATHS`] property paths.
fn check_shard_key(fields: &Map<String, Value>, path: &str) -> ApiResult<()> {
    let paths = match fields.get("vectorIndexShardKey") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(paths)) if paths.iter().all(Value::is_string) => paths,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "One of the specified inputs is invalid: the 'vectorIndexShardKey' of the vector \
                 index on {path} is an array of paths such as [\"/city\"], got {other}."
            )))
        }
    };
    for shard in paths.iter().filter_map(Value::as_str) {
        if !is_property_path(shard) {
            return Err(ApiError::bad_request(format!(
                "The Vector Indexing Policy has an invalid Shard Path: {shard}. A path of the \
                 'vectorIndexShardKey' of the vector index on {path} starts with '/', e.g. \
                 \"/city\" or \"/country/city\"."
            )));
        }
    }
    if paths.len() > MAX_SHARD_PATHS {
        return Err(ApiError::bad_request(format!(
            "The number of shard paths defined in the Vector Indexing Policy: {} exceeds the \
             maximum: {MAX_SHARD_PATHS}. (The 'vectorIndexShardKey' of the vector index on \
             {path}.)",
            paths.len()
        )));
    }
    Ok(())
}

/// Checks the `n`th entry of `fullTextIndexes`: a path of the policy.
fn check_full_text_index(n: usize, entry: &Value, policy: &FullTextPolicy) -> ApiResult<()> {
    let Some(path) = entry.get("path").and_then(Value::as_str) else {
        return Err(ApiError::bad_request(format!(
            "Missing path in full-text index specification at index ({n}): each entry of \
             'fullTextIndexes' is an object with a 'path', e.g. {{\"path\": \"/abstract\"}}; got \
             {entry}."
        )));
    };
    if !is_property_path(path) {
        return Err(ApiError::bad_request(format!(
            "Full-text index specification at index ({n}) contains invalid path {path}: a path \
             starts with '/', e.g. \"/abstract\"."
        )));
    }
    if !policy.paths.iter().any(|p| p.path == path) {
        let known: Vec<&str> = policy.paths.iter().map(|p| p.path.as_str()).collect();
        return Err(ApiError::bad_request(format!(
            "The path of the Full Text Index {path} does not match the path specified in the Full \
             Text Policy: a full-text index's 'path' is one of the fullTextPolicy's fullTextPaths \
             ({}).",
            listed(&known)
        )));
    }
    Ok(())
}

// ---- replace ----------------------------------------------------------------

/// A container replace keeps every embedding the container has (new ones
/// may be added).
pub(crate) fn check_embeddings_kept(
    current: &VectorEmbeddingPolicy,
    sent: &VectorEmbeddingPolicy,
) -> ApiResult<()> {
    for embedding in &current.embeddings {
        if sent.for_path(&embedding.path) != Some(embedding) {
            return Err(ApiError::bad_request(format!(
                "Paths in existing embedding policy cannot be modified in Collection Replace: the \
                 embedding {} keeps its dataType, dimensions and distanceFunction, and stays in \
                 the vectorEmbeddingPolicy (new embeddings may be added).",
                embedding.path
            )));
        }
    }
    Ok(())
}

/// A container replace keeps the vector indexes a container has: the same
/// entries (in any order, the names of types in any case); a container
/// without any may get some.
pub(crate) fn check_vector_indexes_kept(current: &Value, sent: &Value) -> ApiResult<()> {
    let current = canonical_vector_indexes(current.get("vectorIndexes"));
    let sent = canonical_vector_indexes(sent.get("vectorIndexes"));
    // The service's own words: an index may be added or removed, but the
    // index of a path that keeps one stays as it was.
    let modified = sent.iter().find(|(path, entry)| {
        current
            .iter()
            .any(|(current_path, current_entry)| current_path == path && current_entry != entry)
    });
    match modified {
        None => Ok(()),
        Some((path, _)) => Err(ApiError::bad_request(format!(
            "Paths in existing vector indexing policy cannot be modified in Collection Replace. \
             They can only be added or removed. The vector index of {path} differs from the \
             container's: send it as read."
        ))),
    }
}

/// Vector indexes as comparable text, sorted: what each entry says, its
/// type and quantizer in lower case.
fn canonical_vector_indexes(value: Option<&Value>) -> Vec<(String, String)> {
    let lower = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Value::from(s.to_ascii_lowercase()),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    let mut entries: Vec<(String, String)> = list(value)
        .iter()
        .map(|entry| {
            let path = entry
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let canonical = json!([
                entry.get("path"),
                lower(entry.get("type")),
                lower(entry.get("quantizerType")),
                entry.get("quantizationByteSize"),
                entry.get("indexingSearchListSize"),
                entry.get("vectorIndexShardKey"),
            ])
            .to_string();
            (path.to_string(), canonical)
        })
        .collect();
    entries.sort();
    entries
}
