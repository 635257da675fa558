//! A container's search policies: the vector embedding policy
//! (`vectorEmbeddingPolicy`: which properties hold vectors, of what type,
//! length and distance), the full-text policy (`fullTextPolicy`: which
//! properties hold text, in which language), and the indexes that name
//! them in the indexing policy (`vectorIndexes`, `fullTextIndexes`).
//!
//! Both policies are served back exactly as the client sent them (they
//! stay in `ContainerSettings::extra`); what is read here is what the
//! query engine needs, and the checks the service makes, with its words:
//! - the Python SDK's `test_vector_policy.py` and `test_full_text_policy.py`
//!   (Azure/azure-sdk-for-python, `sdk/cosmos/azure-cosmos/tests/`), which
//!   run against the service and pin its messages ("The Vector Embedding
//!   Policy has an invalid DataType", "... has Dimensions:8000 which is more
//!   than the maximum supported value", "The Vector Indexing Policy's
//!   path::/vector3 not matching in Embedding's path.", "Index Type::notFlat
//!   is invalid", the QuantizationByteSize and IndexingSearchListSize
//!   ranges, the shard key rules, "Paths in existing vector indexing policy
//!   cannot be modified in Collection Replace", "The Full Text Policy
//!   contains an unsupported language spa-SPA. Supported languages are:",
//!   "Missing path in full-text index specification at index (0)", ...);
//! - the vector indexing documentation (learn.microsoft.com, "Vector
//!   indexing policies"): flat indexes hold vectors of at most 505
//!   dimensions, quantizedFlat and diskANN up to 4096; the vector's path
//!   belongs in `excludedPaths` (which is therefore not refused).
//!
//! Every refusal is a 400 and nothing is stored. The indexes are checked
//! against the policies of the same request in `indexes.rs`, which also
//! says what a container replace may change.

use serde_json::{json, Value};

use crate::protocol::error::{ApiError, ApiResult};

mod indexes;
pub(crate) use indexes::{check_embeddings_kept, check_indexes, check_vector_indexes_kept};

/// The most dimensions an embedding may have (and a quantizedFlat or
/// diskANN index may hold).
pub const MAX_DIMENSIONS: u32 = 4096;
/// The languages of full-text search.
pub const LANGUAGES: [&str; 7] = [
    "en-US", "fr-FR", "de-DE", "it-IT", "pt-BR", "pt-PT", "es-ES",
];
/// The language of a full-text path that names none, in a policy without
/// a default.
const DEFAULT_LANGUAGE: &str = "en-US";

/// How the components of a vector are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorDataType {
    Float32,
    Float16,
    Int8,
    Uint8,
}

/// How two vectors' distance is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceFunction {
    Cosine,
    DotProduct,
    Euclidean,
}

impl VectorDataType {
    /// `float32`, `float16`, `int8` or `uint8`, in any case.
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "float32" => Some(Self::Float32),
            "float16" => Some(Self::Float16),
            "int8" => Some(Self::Int8),
            "uint8" => Some(Self::Uint8),
            _ => None,
        }
    }
}

impl DistanceFunction {
    /// `cosine`, `dotproduct` or `euclidean`, in any case.
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "cosine" => Some(Self::Cosine),
            "dotproduct" => Some(Self::DotProduct),
            "euclidean" => Some(Self::Euclidean),
            _ => None,
        }
    }
}

/// One entry of `vectorEmbeddings`.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorEmbedding {
    /// As given, e.g. "/vector1".
    pub path: String,
    pub data_type: VectorDataType,
    pub dimensions: u32,
    pub distance_function: DistanceFunction,
}

/// `vectorEmbeddingPolicy`: `{"vectorEmbeddings": [{"path", "dataType",
/// "dimensions", "distanceFunction"}, ...]}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorEmbeddingPolicy {
    pub embeddings: Vec<VectorEmbedding>,
}

impl VectorEmbeddingPolicy {
    /// Reads and validates a container's `vectorEmbeddingPolicy`; absent or
    /// null, the policy is empty.
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let mut embeddings: Vec<VectorEmbedding> = Vec::new();
        for entry in Self::entries(value)? {
            let embedding = VectorEmbedding::parse(entry)?;
            if embeddings.iter().any(|e| e.path == embedding.path) {
                return Err(ApiError::bad_request(format!(
                    "The Vector Embedding Policy has a duplicate Path:{}. Each embedding's 'path' \
                     must be unique.",
                    embedding.path
                )));
            }
            embeddings.push(embedding);
        }
        Ok(VectorEmbeddingPolicy { embeddings })
    }

    /// The embeddings of a stored policy, taken as they come: those that
    /// do not pass today's checks (stored before they were made) are left
    /// out, and the container still opens.
    pub(crate) fn parse_stored(value: Option<&Value>) -> Self {
        let mut embeddings: Vec<VectorEmbedding> = Vec::new();
        for entry in Self::entries(value).unwrap_or_default() {
            if let Ok(embedding) = VectorEmbedding::parse(entry) {
                if embeddings.iter().all(|e| e.path != embedding.path) {
                    embeddings.push(embedding);
                }
            }
        }
        VectorEmbeddingPolicy { embeddings }
    }

    /// The embedding whose path is `path` (e.g. "/vector1"; a nested path "/a/b").
    pub fn for_path(&self, path: &str) -> Option<&VectorEmbedding> {
        self.embeddings.iter().find(|e| e.path == path)
    }

    /// The entries of `vectorEmbeddings`, once the policy's shape holds.
    fn entries(value: Option<&Value>) -> ApiResult<&[Value]> {
        let policy = match value {
            None | Some(Value::Null) => return Ok(&[]),
            Some(Value::Object(policy)) => policy,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "The Vector Embedding Policy is invalid: 'vectorEmbeddingPolicy' is an object \
                     such as {}, got {other}.",
                    example_embedding_policy()
                )))
            }
        };
        match policy.get("vectorEmbeddings") {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(list)) => Ok(list),
            Some(other) => Err(ApiError::bad_request(format!(
                "The Vector Embedding Policy is invalid: 'vectorEmbeddings' is an array of \
                 embeddings, got {other}. Expected e.g. {}.",
                example_embedding_policy()
            ))),
        }
    }
}

fn example_embedding_policy() -> Value {
    json!({"vectorEmbeddings": [{"path": "/vector1", "dataType": "float32",
        "dimensions": 256, "distanceFunction": "cosine"}]})
}

impl VectorEmbedding {
    /// One entry of `vectorEmbeddings`. Its `embeddingSource` (an object)
    /// and fields it does not know are served back, not read.
    fn parse(entry: &Value) -> ApiResult<Self> {
        let Some(fields) = entry.as_object() else {
            return Err(ApiError::bad_request(format!(
                "The Vector Embedding Policy is invalid: each entry of 'vectorEmbeddings' is an \
                 object with 'path', 'dataType', 'dimensions' and 'distanceFunction', got {entry}."
            )));
        };
        let path = match fields.get("path") {
            Some(Value::String(path)) if is_property_path(path) => path.clone(),
            other => {
                return Err(ApiError::bad_request(format!(
                    "The Vector Embedding Policy has an invalid Path:{}. Specify the correct path \
                     for vector properties of your documents: an embedding's 'path' starts with \
                     '/' and names a property, e.g. \"/vector1\" or \"/a/b\".",
                    shown(other)
                )))
            }
        };
        let data_type = fields.get("dataType");
        let Some(data_type) = data_type
            .and_then(Value::as_str)
            .and_then(VectorDataType::parse)
        else {
            return Err(ApiError::bad_request(format!(
                "The Vector Embedding Policy has an invalid DataType:{}. Supported types are \
                 float32, float16, int8 and uint8 (the 'dataType' of the embedding {path}).",
                shown(data_type)
            )));
        };
        let dimensions = parse_dimensions(fields.get("dimensions"), &path)?;
        let distance = fields.get("distanceFunction");
        let Some(distance_function) = distance
            .and_then(Value::as_str)
            .and_then(DistanceFunction::parse)
        else {
            return Err(ApiError::bad_request(format!(
                "The Vector Embedding Policy has an invalid DistanceFunction:{}. Supported \
                 functions are cosine, dotproduct and euclidean (the 'distanceFunction' of the \
                 embedding {path}).",
                shown(distance)
            )));
        };
        match fields.get("embeddingSource") {
            None | Some(Value::Null | Value::Object(_)) => {}
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "The Vector Embedding Policy has an invalid embeddingSource:{other}: the \
                     'embeddingSource' of the embedding {path} is an object."
                )))
            }
        }
        Ok(VectorEmbedding {
            path,
            data_type,
            dimensions,
            distance_function,
        })
    }
}

/// An embedding's `dimensions`: a whole number from 1 to [`MAX_DIMENSIONS`].
fn parse_dimensions(value: Option<&Value>, path: &str) -> ApiResult<u32> {
    let which = format!("the 'dimensions' of the embedding {path}");
    let Some(number) = value.filter(|v| v.is_i64() || v.is_u64()) else {
        return Err(ApiError::bad_request(format!(
            "The Vector Embedding Policy has an invalid Dimensions:{}: {which} is a whole number \
             from 1 to {MAX_DIMENSIONS}.",
            shown(value)
        )));
    };
    match number.as_i64() {
        Some(n) if n < 1 => Err(ApiError::bad_request(format!(
            "The Vector Embedding Policy has Dimensions:{n} which is less than the minimum \
             supported value of 1 ({which})."
        ))),
        Some(n) if n <= i64::from(MAX_DIMENSIONS) => Ok(n as u32),
        // Above the limit, perhaps beyond i64.
        _ => Err(ApiError::bad_request(format!(
            "The Vector Embedding Policy has Dimensions:{number} which is more than the maximum \
             supported value of {MAX_DIMENSIONS} ({which})."
        ))),
    }
}

/// One entry of `fullTextPaths`.
#[derive(Debug, Clone, PartialEq)]
pub struct FullTextPath {
    pub path: String,
    pub language: Option<String>,
}

/// `fullTextPolicy`: `{"defaultLanguage": "en-US", "fullTextPaths":
/// [{"path": "/abstract", "language": "en-US"}]}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FullTextPolicy {
    pub default_language: Option<String>,
    pub paths: Vec<FullTextPath>,
}

impl FullTextPolicy {
    /// Reads and validates a container's `fullTextPolicy`; absent or null,
    /// the policy is empty.
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let (default_language, entries) = Self::fields(value)?;
        let default_language = parse_language(default_language)?;
        let paths = entries
            .iter()
            .map(FullTextPath::parse)
            .collect::<ApiResult<Vec<_>>>()?;
        Ok(FullTextPolicy {
            default_language,
            paths,
        })
    }

    /// The policy of a stored container, taken as it comes: what does not
    /// pass today's checks (stored before they were made) is left out.
    pub(crate) fn parse_stored(value: Option<&Value>) -> Self {
        let Ok((default_language, entries)) = Self::fields(value) else {
            return FullTextPolicy::default();
        };
        FullTextPolicy {
            default_language: parse_language(default_language).ok().flatten(),
            paths: entries
                .iter()
                .filter_map(|entry| {
                    let path = entry.get("path").and_then(Value::as_str)?;
                    Some(FullTextPath {
                        path: path.to_string(),
                        language: parse_language(entry.get("language")).ok().flatten(),
                    })
                })
                .collect(),
        }
    }

    /// The language of `path`: its own, else the default, else "en-US".
    pub fn language_for(&self, path: &str) -> &str {
        self.paths
            .iter()
            .find(|p| p.path == path)
            .and_then(|p| p.language.as_deref())
            .or(self.default_language.as_deref())
            .unwrap_or(DEFAULT_LANGUAGE)
    }

    /// `defaultLanguage` and the entries of `fullTextPaths`, once the
    /// policy's shape holds.
    fn fields(value: Option<&Value>) -> ApiResult<(Option<&Value>, &[Value])> {
        let policy = match value {
            None | Some(Value::Null) => return Ok((None, &[])),
            Some(Value::Object(policy)) => policy,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "The Full Text Policy is invalid: 'fullTextPolicy' is an object such as {}, \
                     got {other}.",
                    example_full_text_policy()
                )))
            }
        };
        let entries: &[Value] = match policy.get("fullTextPaths") {
            None | Some(Value::Null) => &[],
            Some(Value::Array(list)) => list,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "The Full Text Policy is invalid: 'fullTextPaths' is an array of paths, got \
                     {other}. Expected e.g. {}.",
                    example_full_text_policy()
                )))
            }
        };
        Ok((policy.get("defaultLanguage"), entries))
    }
}

fn example_full_text_policy() -> Value {
    json!({"defaultLanguage": "en-US", "fullTextPaths": [{"path": "/abstract", "language": "en-US"}]})
}

impl FullTextPath {
    fn parse(entry: &Value) -> ApiResult<Self> {
        let path = match entry.get("path") {
            Some(Value::String(path)) if is_property_path(path) => path.clone(),
            other => {
                return Err(ApiError::bad_request(format!(
                    "The Full Text Policy contains an invalid Path: {}. Each entry of \
                     'fullTextPaths' names a property by a 'path' that starts with '/', e.g. \
                     {{\"path\": \"/abstract\", \"language\": \"en-US\"}}.",
                    shown(other)
                )))
            }
        };
        let language = parse_language(entry.get("language"))?;
        Ok(FullTextPath { path, language })
    }
}

/// The Windows locale ids of [`LANGUAGES`], in their order: the service
/// takes `"1033"` for en-US (the JavaScript SDK's "validate full text search
/// policy"; the others inferred from it).
const LOCALE_IDS: [&str; 7] = ["1033", "1036", "1031", "1040", "1046", "2070", "3082"];

/// A `defaultLanguage` or a path's `language`: absent, or one of
/// [`LANGUAGES`] in any case (kept as given), or its locale id (read as
/// its language; the policy is still served back as sent).
fn parse_language(value: Option<&Value>) -> ApiResult<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(language))
            if LANGUAGES.iter().any(|l| l.eq_ignore_ascii_case(language)) =>
        {
            Ok(Some(language.clone()))
        }
        Some(Value::String(id)) if LOCALE_IDS.contains(&id.trim()) => {
            let at = LOCALE_IDS.iter().position(|l| *l == id.trim());
            Ok(at.map(|at| LANGUAGES[at].to_string()))
        }
        Some(other) => {
            let supported: Vec<String> = LANGUAGES.iter().map(|l| format!("\"{l}\"")).collect();
            Err(ApiError::bad_request(format!(
                "The Full Text Policy contains an unsupported language {}. Supported languages \
                 are: {}.",
                shown(Some(other)),
                supported.join(", ")
            )))
        }
    }
}

/// Whether `path` names a property: `/name` or `/a/b`, no empty segment.
fn is_property_path(path: &str) -> bool {
    path.strip_prefix('/')
        .is_some_and(|rest| rest.split('/').all(|segment| !segment.is_empty()))
}

/// A value as a message shows it: a string bare, anything else as JSON,
/// nothing as "(none)".
fn shown(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "(none)".to_string(),
    }
}

/// How two vectors are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    pub distance: DistanceFunction,
    pub data_type: VectorDataType,
}

impl Default for Comparison {
    fn default() -> Self {
        Comparison {
            distance: DistanceFunction::Cosine,
            data_type: VectorDataType::Float32,
        }
    }
}

/// The container's policies that search functions read.
#[derive(Debug, Clone, Default)]
pub struct Policies {
    pub vectors: VectorEmbeddingPolicy,
    pub full_text: FullTextPolicy,
}

impl Policies {
    /// How `VectorDistance` compares vectors at `path` (a document path,
    /// if one of its arguments is), `options` overriding the policy.
    pub fn comparison(&self, path: Option<&str>, options: Option<&Value>) -> Option<Comparison> {
        let mut comparison =
            path.and_then(|p| self.vectors.for_path(p))
                .map_or_else(Comparison::default, |e| Comparison {
                    distance: e.distance_function,
                    data_type: e.data_type,
                });
        if let Some(options) = options {
            let options = options.as_object()?;
            for (key, value) in options {
                if key.eq_ignore_ascii_case("distanceFunction") {
                    comparison.distance = DistanceFunction::parse(value.as_str()?)?;
                } else if key.eq_ignore_ascii_case("dataType") {
                    comparison.data_type = VectorDataType::parse(value.as_str()?)?;
                }
            }
        }
        Some(comparison)
    }
}
