//! With `--data-dir`, a request is answered only once what it changed is
//! kept: its commit written (every sync mode) and, with `--sync always`,
//! synced. A request whose commit could not be written is answered 503,
//! never with a success the disk does not back.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use crate::persist::Committed;
use crate::store;

pub async fn durable(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(journal) = state.account.store.journal() else {
        return next.run(request).await;
    };
    let (response, committed) = journal.track(next.run(request)).await;
    match committed {
        Committed::Nothing => response,
        Committed::Through(_) => {
            if state.account.store.compaction_due() {
                let store = state.account.store.clone();
                tokio::task::spawn_blocking(move || store.compact_if_due());
            }
            response
        }
        Committed::Failed => store::unavailable(&format!(
            "a write to {} failed",
            journal.dir().path().display()
        ))
        .into_response(),
    }
}
