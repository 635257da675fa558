//! Direct mode's front door: RNTBD, the binary protocol the Java and .NET
//! SDKs speak to replicas by default, beside `http/`: its frame codec,
//! `codec/`, a leaf that names nothing else of the emulator, and
//! `dispatch.rs`, which answers one request frame with the operation the
//! HTTP adapter calls (the connections that read frames and call it are
//! `net/`'s). The protocol's facts: `docs/src/reference/rntbd.md`.

// The connections will call the dispatcher and use the codec's items
// (context exchange, incoming frames); until they do, these are dead code.
#![allow(dead_code, unused_imports)]

pub mod codec;
pub(crate) mod dispatch;
