//! The store's view against the scan, by property tests: random
//! containers (every kind of value, expired and deleted items, indexes
//! built before or after the writes) and random queries that an index
//! (`index.rs`), a vector column (`nearest.rs`) or a spatial column
//! (`spatial.rs`) could answer, run both ways, page by page: the same
//! results in the same order.

mod index;
mod nearest;
mod spatial;

use bytes::Bytes;

use super::ScopedView;
use crate::data::query::view::ContainerView;
use crate::data::query::{Continuation, PageLimit, PreparedQuery, QueryBody};
use crate::data::store::Container;
use crate::protocol::partition_key::KeyScope;

/// The clock's second the queries run at.
const NOW: i64 = 100;

/// `text`, prepared.
fn prepared(text: &str) -> PreparedQuery {
    PreparedQuery::prepare(&QueryBody {
        query: text.into(),
        parameters: vec![],
    })
    .unwrap()
}

/// Every result of `text`, page by page (3 items a page where pages
/// resume after an item), with the container's index or without any.
pub(super) fn results(
    c: &Container,
    text: &str,
    scope: Option<&KeyScope>,
    indexed: bool,
) -> Vec<String> {
    let query = prepared(text);
    let items = |after: Option<u64>| {
        c.live_items(scope, after, NOW)
            .map(|(number, key, item)| (number, key, &item.body))
    };
    let view = |after: Option<u64>| ScopedView {
        c,
        in_scope: move |pk: &str| scope.is_none_or(|s| s.contains(pk)),
        now: NOW,
        after,
    };
    let texts = |results: Vec<Bytes>| -> Vec<String> {
        results
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    };
    if query.needs_whole_result() {
        let mut view = view(None);
        let view = indexed.then_some(&mut view as &mut dyn ContainerView);
        return texts(
            query
                .run_whole(Default::default(), items(None), view)
                .unwrap()
                .0,
        );
    }
    let limit = PageLimit {
        items: 3,
        bytes: usize::MAX,
    };
    let mut all = Vec::new();
    let mut after: Option<u64> = None;
    loop {
        let mut page_view = view(after);
        let page_view = indexed.then_some(&mut page_view as &mut dyn ContainerView);
        let continuation = after.map(|after| Continuation::After { after });
        let page = query
            .run_page(
                Default::default(),
                items(after),
                page_view,
                continuation.as_ref(),
                limit,
            )
            .unwrap()
            .0;
        all.extend(texts(page.documents));
        match page.continuation {
            Some(Continuation::After { after: number }) => after = Some(number),
            _ => return all,
        }
    }
}
