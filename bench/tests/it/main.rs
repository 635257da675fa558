//! The bench crate's integration tests, one binary (`cargo test -p
//! cosmos-bench --test it`), one module per measurement they check.

mod persistence;
mod plan_query;
