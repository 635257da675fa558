//! The service's documented quotas, and the few limits of the emulator's
//! own that keep every recursive part bounded, in one place: the parser, the
//! store, the HTTP layer and the error messages all read these constants.
//!
//! Where the service documents a quota ("Service quotas and default limits",
//! per-item, per-request and SQL query limits), the constant is that quota.
//! Where it documents none but recursion needs a bound (query expression
//! nesting, partition key path depth), the emulator's limit is chosen so that
//! no query an application writes comes near it; the README lists both kinds.

/// An item's JSON may be at most 2 MB (per-item limits).
pub const MAX_ITEM_BYTES: usize = 2 * 1024 * 1024;

/// A request's body is at most 2 MB as sent (per-request limits), escapes
/// included: an item whose JSON the client escapes may exceed it although
/// its stored form does not.
pub const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;

/// Objects and arrays nest at most 128 levels deep, the item itself counting
/// as the first level (per-item limits: "maximum level of nesting for
/// embedded objects / arrays"). serde_json parses exactly this depth, so a
/// stored item always parses back.
pub const MAX_NESTING_DEPTH: usize = 128;

/// An item id is at most 1,023 bytes of UTF-8 (per-item limits).
pub const MAX_ID_BYTES: usize = 1023;

/// Database and container names are at most 255 characters (per-container limits).
pub const MAX_RESOURCE_NAME_CHARS: usize = 255;

/// A partition key value is at most 2,048 bytes (large partition keys, per-item limits).
pub const MAX_PARTITION_KEY_BYTES: usize = 2048;

/// A query's text is at most 512 KB (SQL query limits).
pub const MAX_QUERY_TEXT_BYTES: usize = 512 * 1024;

/// JOINs in one query (SQL query limits).
pub const MAX_JOINS: usize = 10;

/// The emulator's own bound on the JSON a container's change log keeps
/// (versions an all-versions-and-deletes reader may still read): past it
/// the oldest entries go, as past the retention (`--change-feed-retention`).
pub const MAX_CHANGE_LOG_BYTES: usize = 64 * 1024 * 1024;

/// The emulator's own bound on the rows JOINs make of one item (their
/// product grows fast: ten JOINs over arrays of ten make 10^10).
pub const MAX_JOIN_ROWS: usize = 1_000_000;

/// The emulator's own bound on how deeply a query's expressions nest
/// (parentheses, function arguments, array and object literals, `NOT`s,
/// signs and property steps): it bounds the recursion of the parser and the
/// evaluator. Long flat chains (`a OR b OR c ...`, `1 + 2 + 3 ...`) do not
/// nest and are bounded only by the text length.
pub const MAX_QUERY_NESTING: usize = 128;

/// Explicitly included, and explicitly excluded, paths per container (SQL query limits).
pub const MAX_INDEXING_PATHS: usize = 1500;

/// Paths in one composite index (SQL query limits: "maximum properties in a composite index").
pub const MAX_COMPOSITE_INDEX_PATHS: usize = 8;

/// Operations in one patch request (partial document update limits).
pub const MAX_PATCH_OPERATIONS: usize = 10;

/// Operations in one transactional batch or bulk request (per-request
/// limits: "maximum operations in a transactional batch").
pub const MAX_BATCH_OPERATIONS: usize = 100;

/// How far a request's `x-ms-date` may be from the server's wall clock
/// before the signature is refused (the service refuses older or newer tokens).
pub const MAX_CLOCK_SKEW_SECONDS: i64 = 15 * 60;

/// The emulator's own bound on parameter values copied into a query, each
/// reference counted (16 MB, the largest body it reads).
pub const MAX_SUBSTITUTED_BYTES: usize = 16 * 1024 * 1024;

/// The stack of every thread that serves requests. The nesting limits above
/// bound all recursion; this leaves a wide margin over what the deepest
/// accepted query and document need, even in unoptimised builds (just
/// under 2 MB there, measured; tokio's default is 2 MB). It is address space, not memory:
/// pages are committed only when used.
pub const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

/// The emulator's own bound on the bytes evaluating a query for one item
/// may copy (see `data/query/budget.rs`): 32 copies of the largest item.
pub const MAX_EVALUATION_BYTES: usize = 64 * 1024 * 1024;

/// The largest body a stored procedure may answer (the service's 4 MB
/// response limit); a script over it is refused, not sent.
pub const MAX_SCRIPT_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
