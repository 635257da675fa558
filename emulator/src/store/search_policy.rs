//! Placeholder of the container's search policies (vector embeddings and
//! full text), replaced by the validated module on the search-policies branch.

use serde_json::Value;

use crate::error::ApiResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorDataType {
    Float32,
    Float16,
    Int8,
    Uint8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceFunction {
    Cosine,
    DotProduct,
    Euclidean,
}

impl VectorDataType {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "float32" => Self::Float32,
            "float16" => Self::Float16,
            "int8" => Self::Int8,
            "uint8" => Self::Uint8,
            _ => return None,
        })
    }
}

impl DistanceFunction {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "cosine" => Self::Cosine,
            "dotproduct" => Self::DotProduct,
            "euclidean" => Self::Euclidean,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct VectorEmbedding {
    pub path: String,
    pub data_type: VectorDataType,
    pub dimensions: u32,
    pub distance_function: DistanceFunction,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorEmbeddingPolicy {
    pub embeddings: Vec<VectorEmbedding>,
}

impl VectorEmbeddingPolicy {
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let embeddings = value
            .and_then(|v| v["vectorEmbeddings"].as_array())
            .map(|list| {
                list.iter()
                    .filter_map(|e| {
                        Some(VectorEmbedding {
                            path: e["path"].as_str()?.to_string(),
                            data_type: VectorDataType::parse(e["dataType"].as_str()?)?,
                            dimensions: e["dimensions"].as_u64()? as u32,
                            distance_function: DistanceFunction::parse(
                                e["distanceFunction"].as_str()?,
                            )?,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self { embeddings })
    }

    pub fn for_path(&self, path: &str) -> Option<&VectorEmbedding> {
        self.embeddings.iter().find(|e| e.path == path)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FullTextPath {
    pub path: String,
    pub language: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FullTextPolicy {
    pub default_language: Option<String>,
    pub paths: Vec<FullTextPath>,
}

impl FullTextPolicy {
    pub fn parse(value: Option<&Value>) -> ApiResult<Self> {
        let Some(value) = value else {
            return Ok(Self::default());
        };
        Ok(Self {
            default_language: value["defaultLanguage"].as_str().map(str::to_string),
            paths: value["fullTextPaths"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(|p| {
                            Some(FullTextPath {
                                path: p["path"].as_str()?.to_string(),
                                language: p["language"].as_str().map(str::to_string),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    pub fn language_for(&self, path: &str) -> &str {
        self.paths
            .iter()
            .find(|p| p.path == path)
            .and_then(|p| p.language.as_deref())
            .or(self.default_language.as_deref())
            .unwrap_or("en-US")
    }
}
