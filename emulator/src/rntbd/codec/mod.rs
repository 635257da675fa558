//! The RNTBD frame codec: a connection's bytes into frames and frames into
//! bytes, and nothing else (no connection, HTTP, store or operation). Its
//! parts, from the bottom: `token_type.rs` (the token types), `error.rs`
//! (what can be wrong), `token.rs` (token values, one token read or
//! written), `table.rs` (the macro that makes a table of known token ids),
//! `request_tokens.rs` and `response_tokens.rs` (the ids the emulator reads
//! and writes, with their declared types), `kinds.rs` (resource and
//! operation types), `wire.rs` (what every frame shares: header, limits,
//! payload), `frame.rs` (request and response frames), `context.rs` (the
//! context exchange) and `incoming.rs` (a connection's frames told apart).
//! The protocol's facts, with their sources: `docs/src/reference/rntbd.md`.

mod context;
mod error;
mod frame;
mod incoming;
mod kinds;
mod request_tokens;
mod response_tokens;
mod table;
mod token;
mod token_type;
mod wire;

pub use context::{ContextRequest, ContextResponse, PROTOCOL_VERSION};
pub use error::{EncodeError, FrameError, TokenName};
pub use frame::{RequestFrame, ResponseFrame};
pub use incoming::{decode_incoming, Incoming};
pub use kinds::{OperationType, ResourceType};
pub use request_tokens::{RequestToken, RequestTokens};
pub use response_tokens::{ResponseToken, ResponseTokens};
pub use token::{read_token, write_token, RawToken, TokenValue};
pub use token_type::TokenType;
pub use wire::{
    HEADER_BYTES, MAX_METADATA_BYTES, MAX_REQUEST_PAYLOAD_BYTES, MAX_RESPONSE_PAYLOAD_BYTES,
};

#[cfg(test)]
mod tests;
