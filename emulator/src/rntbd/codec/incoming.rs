//! What a client sends on a connection, told apart: the context request
//! (bytes 4..8, the resource and operation types, all zero, as the Java
//! SDK 4.81.0's `RntbdContextRequestDecoder` tells it) or a data request.
//! The adapter's one entry point for reading a connection.

use super::context::ContextRequest;
use super::error::FrameError;
use super::frame::RequestFrame;
use super::wire::metadata;

/// One frame a client sent.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming<'a> {
    Context(ContextRequest<'a>),
    /// Boxed: a request's table of tokens is some 1.3 KB, a context
    /// request's fields a few words.
    Request(Box<RequestFrame<'a>>),
}

/// Decodes the frame at the start of `buf`, a connection's bytes as they
/// arrive: `Ok(None)` while more are needed; the frame and the bytes it
/// took; or why these bytes are no frame (the connection's framing is then
/// lost).
pub fn decode_incoming(buf: &[u8]) -> Result<Option<(Incoming<'_>, usize)>, FrameError> {
    let Some(kinds) = buf.get(4..8) else {
        // Not yet told apart, but a length no frame has is refused at once
        // (`metadata` is never whole below 24 bytes).
        return metadata(buf).map(|_| None);
    };
    let is_context = kinds == [0; 4];
    Ok(match is_context {
        true => ContextRequest::decode(buf)?.map(|(c, n)| (Incoming::Context(c), n)),
        false => RequestFrame::decode(buf)?.map(|(r, n)| (Incoming::Request(Box::new(r)), n)),
    })
}
