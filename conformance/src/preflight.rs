//! The check before any case: the endpoint answers, over TLS when it is
//! https, and accepts the key (a signed account read, `GET /`). A run whose
//! target cannot be reached must not look like a run whose cases failed,
//! and never like one whose failures were expected: it does not start.

use crate::client::{excerpt, Client, Request, TransportKind};
use reqwest::Method;
use serde_json::Value;
use std::fmt;

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// Nothing answers at the endpoint (refused, unknown host, no route).
    Unreachable(String),
    /// The connection was made but TLS failed.
    Tls(String),
    /// The account read timed out.
    Timeout(String),
    /// The endpoint refused the key (401 or 403), with the server's payload.
    KeyRefused { status: u16, body: String },
    /// An answer, but not the account of a Cosmos DB endpoint.
    NotCosmos(String),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Unreachable(e) => write!(f, "the endpoint is unreachable: {e}"),
            StartError::Tls(e) => write!(
                f,
                "TLS failure: {e} (a self-signed emulator needs --insecure; an http endpoint needs http://)"
            ),
            StartError::Timeout(e) => write!(f, "the endpoint does not answer: {e}"),
            StartError::KeyRefused { status, body } => write!(
                f,
                "the endpoint refused the key: the account read answered {status}: {}",
                excerpt(body)
            ),
            StartError::NotCosmos(e) => write!(f, "not a Cosmos DB endpoint: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

/// What the account read told about the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The account's `id`, when it answers one.
    pub id: Option<String>,
}

/// Reads the account (`GET /`, signed with an empty resource type and link).
pub async fn check(client: &Client) -> Result<Account, StartError> {
    let request = Request::new(Method::GET, String::new(), "", String::new());
    let response = client.send(request).await.map_err(|e| match e.kind {
        TransportKind::Connect => StartError::Unreachable(e.message),
        TransportKind::Tls => StartError::Tls(e.message),
        TransportKind::Timeout => StartError::Timeout(e.message),
        TransportKind::Other => StartError::NotCosmos(e.message),
    })?;
    match response.status {
        200 => match response.json() {
            Some(Value::Object(account)) => Ok(Account {
                id: account
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }),
            _ => Err(StartError::NotCosmos(format!(
                "the account read answered 200 without a JSON object: {}",
                excerpt(&response.body)
            ))),
        },
        401 | 403 => Err(StartError::KeyRefused {
            status: response.status,
            body: response.body,
        }),
        status => Err(StartError::NotCosmos(format!(
            "the account read (GET /) answered {status}: {}",
            excerpt(&response.body)
        ))),
    }
}
