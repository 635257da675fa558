//! Direct mode's front door: RNTBD, the binary protocol the Java and .NET
//! SDKs speak to replicas by default, beside `http/`. Its parts: `codec/`
//! (the frames, a leaf that names nothing else of the emulator),
//! `connection/` (one connection served: the context exchange, requests
//! pipelined to a dispatcher, one writer, the limits and timeouts, and the
//! front door the transport is given), `dispatch.rs` (one request frame
//! answered by the operation the HTTP adapter calls) and `refusal.rs` (an
//! error answer's frame). The protocol's facts:
//! `docs/src/reference/rntbd.md`.

// The codec's items serve the client side too (tests, the bench); until
// those use them, some would be dead code.
#![allow(dead_code, unused_imports)]

pub mod codec;
pub(crate) mod connection;
pub(crate) mod dispatch;
mod refusal;
