//! Point reads and point writes (upserts of existing items), each of a
//! random item of the loaded set, at several concurrencies. The bare server
//! gets the very same requests, so the client does the same work.

use std::sync::Arc;

use crate::cosmos::Signer;
use crate::documents::{document, id, partition_header};
use crate::load::MakeRequest;
use crate::measure::dataset::DATABASE;

/// GET of a random item among `0..items`.
pub fn reads(signer: &Signer, container: &'static str, items: usize) -> Arc<MakeRequest> {
    let signer = signer.clone();
    Arc::new(move |rng| {
        let seq = rng.usize(..items);
        signer.read_item(DATABASE, container, &id(seq), &partition_header(seq))
    })
}

/// Upsert of a random existing item among `0..items`, same size as loaded.
pub fn writes(
    signer: &Signer,
    container: &'static str,
    items: usize,
    item_bytes: usize,
) -> Arc<MakeRequest> {
    let signer = signer.clone();
    Arc::new(move |rng| {
        let seq = rng.usize(..items);
        signer.write_item(
            DATABASE,
            container,
            &partition_header(seq),
            document(seq, None, item_bytes),
            true,
        )
    })
}
