//! Direct mode's front door: RNTBD, the binary protocol the Java and .NET
//! SDKs speak to replicas by default, beside `http/`. For now it holds its
//! frame codec, `codec/`, a leaf that names nothing else of the emulator;
//! the adapter (connections, the operations) comes over it. The protocol's
//! facts: `docs/src/reference/rntbd.md`.

// The adapter will use the codec's items (and its re-exports); until it
// does, only the codec's own tests do, so they would all be dead code.
#![allow(dead_code, unused_imports)]

pub mod codec;
