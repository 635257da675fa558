//! A container's vector columns (`data/index/vectors.rs`): kept by `install`
//! and `forget`, read by `ORDER BY VectorDistance`.

use super::Container;
use crate::data::index::vectors::{VectorColumn, VectorColumns};

impl Container {
    /// The float32 vectors of the embedding at `path`, if the container's
    /// policy has one there (expired items included until purged).
    pub fn vector_column(&self, path: &str) -> Option<&VectorColumn> {
        self.vectors.get(path)
    }

    /// Builds the vector columns again, for a changed embedding policy.
    pub(super) fn rebuild_vectors(&mut self) {
        let mut vectors = VectorColumns::for_policy(&self.settings.vector_embeddings);
        for (key, item) in &self.items {
            vectors.put(item.number, key, &item.body);
        }
        self.vectors = vectors;
    }
}
