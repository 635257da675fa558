//! Connections: how the emulator listens, below every protocol adapter.
//! - `transport` (an accepted connection becomes requests: plain HTTP,
//!   HTTPS, or either by its first byte; over TLS, a binary protocol told
//!   from HTTP by its first bytes and handed to the front door the
//!   transport is given; a connection a fault rule may break);
//! - `tls` (the certificates: made at start, kept, or given).

pub(crate) mod tls;
pub(crate) mod transport;
