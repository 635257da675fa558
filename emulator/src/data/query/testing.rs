//! What tests outside the engine may ask of it: whether a query takes a
//! fast path. The store's property tests (`data/store/container/view/tests/`)
//! compare a fast path with the scan, and first check that the query they
//! drew really takes it.

use super::access::Access;
use super::search::nearest::Nearest;
use super::search::Policies;
use super::view::ContainerView;
use super::PreparedQuery;

/// How many spatial conditions of `query` a spatial index could answer.
pub fn spatial_lookups(query: &PreparedQuery) -> usize {
    Access::of(&query.select).near.len()
}

/// Whether `query` orders by a vector distance that a column of `view`
/// answers without the scan.
pub fn vector_column_answers<'c>(
    query: &PreparedQuery,
    policies: &Policies,
    view: &dyn ContainerView<'c>,
) -> bool {
    Nearest::of(&query.select, policies).is_some_and(|nearest| nearest.column(view).is_some())
}
