//! The bench's own Direct-mode (RNTBD) client, written from the guide
//! (`docs/src/reference/rntbd.md`) rather than from the emulator's codec,
//! so that it checks the emulator from outside as the SDKs do:
//! `frame` (request frames written token by token, response frames cut
//! from a buffer), `request` (the signed Document Read and Upsert the point
//! loads send, and the context request), `connection` (one TLS connection
//! past its context exchange, pipelining requests and matching answers by
//! TransportRequestID) and `load` (workers sharing a few such connections,
//! as the SDKs do).

pub mod connection;
pub mod frame;
pub mod load;
pub mod request;
