//! What every RNTBD frame shares, requests, responses and the context
//! exchange alike: a `u32` length L that counts itself, the next 20 bytes
//! and the tokens but not the payload; four bytes (resource and operation
//! types, or the status); the 16-byte activity id in .NET's layout; the
//! tokens; then, when the frame says so, a `u32` n and n payload bytes
//! (the Java SDK 4.81.0's `RntbdRequestFrame`, `RntbdResponseStatus`,
//! `RntbdFramer`). Here: the limits, slicing a frame's parts out of a
//! growing buffer, walking its tokens, and writing a frame.
//! See `docs/src/reference/rntbd.md#framing`.

use bytes::{BufMut, BytesMut};
use uuid::Uuid;

use super::error::{EncodeError, FrameError, TokenName};
use super::token::{read_token, RawToken, TokenValue};
use super::token_type::TokenType;

/// L's least value: the length field, the four bytes after it and the
/// activity id.
pub const HEADER_BYTES: usize = 24;

/// The most a frame's header and tokens (L) may take: 1 MiB. The largest
/// tokens the SDKs send are strings of at most 64 KiB each (`String`'s
/// `u16` length), and a request carries a few dozen tokens at most; no
/// request comes near this, and it bounds what a connection can make the
/// emulator hold before its frame is refused.
pub const MAX_METADATA_BYTES: u32 = 1024 * 1024;

/// The most a request's payload may take: 4 MiB, twice the service's
/// 2 MB request limit (`MAX_REQUEST_BYTES` in `protocol/limits.rs`), so
/// that a body a little past that limit still arrives whole and the
/// operation refuses it with the service's 413, as over HTTP; only what no
/// client sends closes the connection.
pub const MAX_REQUEST_PAYLOAD_BYTES: u32 = 4 * 1024 * 1024;

/// The most a response's payload may take, for the client side (tests and
/// the bench): 16 MiB, four times the service's 4 MB response page.
pub const MAX_RESPONSE_PAYLOAD_BYTES: u32 = 16 * 1024 * 1024;

/// A frame's header and tokens, once all L bytes are in the buffer.
pub(super) struct Metadata<'a> {
    /// L: the bytes the header and tokens take.
    pub length: usize,
    /// Bytes 4..8: resource and operation types, or the status.
    pub word: [u8; 4],
    pub activity_id: Uuid,
    /// Bytes 24..L.
    pub tokens: &'a [u8],
}

/// The header and tokens at the start of `buf`: `None` until L bytes are
/// there; refused as soon as the length field says something no frame is.
pub(super) fn metadata(buf: &[u8]) -> Result<Option<Metadata<'_>>, FrameError> {
    let Some(&[a, b, c, d]) = buf.get(..4) else {
        return Ok(None);
    };
    let length = u32::from_le_bytes([a, b, c, d]);
    if (length as usize) < HEADER_BYTES {
        return Err(FrameError::LengthBelowHeader { length });
    }
    if length > MAX_METADATA_BYTES {
        return Err(FrameError::LengthOverLimit {
            length,
            limit: MAX_METADATA_BYTES,
        });
    }
    let length = length as usize;
    let Some(frame) = buf.get(..length) else {
        return Ok(None);
    };
    let mut activity = [0; 16];
    activity.copy_from_slice(&frame[8..HEADER_BYTES]);
    Ok(Some(Metadata {
        length,
        word: [frame[4], frame[5], frame[6], frame[7]],
        activity_id: Uuid::from_bytes_le(activity),
        tokens: &frame[HEADER_BYTES..],
    }))
}

/// Reads every token of `tokens`, in wire order, handing each to `keep`;
/// `name` names known ids in errors.
pub(super) fn each_token<'a>(
    tokens: &'a [u8],
    name: impl Fn(u16) -> Option<&'static str>,
    mut keep: impl FnMut(RawToken<'a>) -> Result<(), FrameError>,
) -> Result<(), FrameError> {
    let mut offset = 0;
    while offset < tokens.len() {
        let (token, used) = read_token(&tokens[offset..], offset, &name)?;
        keep(token)?;
        offset += used;
    }
    Ok(())
}

/// A frame's PayloadPresent token, read apart from the tables because it
/// decides where the frame ends: a Byte, 0 or 1, once.
pub(super) struct PayloadPresent {
    id: u16,
    seen: Option<bool>,
}

impl PayloadPresent {
    /// The request's id: 0x0002.
    pub const REQUEST: u16 = 0x0002;
    /// The response's id: 0x0000.
    pub const RESPONSE: u16 = 0x0000;

    pub fn new(id: u16) -> PayloadPresent {
        PayloadPresent { id, seen: None }
    }

    fn name(id: u16) -> TokenName {
        TokenName {
            id,
            name: Some("PayloadPresent"),
        }
    }

    /// The name of `id` when it is PayloadPresent's (`payload_id`).
    pub fn named(payload_id: u16, id: u16) -> Option<&'static str> {
        (id == payload_id).then_some("PayloadPresent")
    }

    /// Takes `token` when it is PayloadPresent (true), else leaves it (false).
    pub fn take(&mut self, token: &RawToken<'_>) -> Result<bool, FrameError> {
        if token.id() != self.id {
            return Ok(false);
        }
        let name = Self::name(self.id);
        let wrong_type = FrameError::WrongTokenType {
            token: name,
            expected: TokenType::Byte,
            found: token.token_type(),
        };
        if token.token_type() != TokenType::Byte {
            return Err(wrong_type);
        }
        if self.seen.is_some() {
            return Err(FrameError::DuplicateToken { token: name });
        }
        self.seen = Some(match token.value() {
            Ok(TokenValue::Byte(0)) => false,
            Ok(TokenValue::Byte(1)) => true,
            Ok(TokenValue::Byte(value)) => {
                return Err(FrameError::PayloadPresentNotBoolean { value })
            }
            // A Byte token's value is a byte: checked above.
            _ => return Err(wrong_type),
        });
        Ok(true)
    }

    /// Whether a payload follows; refused when the token never came.
    pub fn present(&self) -> Result<bool, FrameError> {
        self.seen.ok_or(FrameError::MissingToken {
            token: Self::name(self.id),
        })
    }

    /// The token to write for a frame with or without a payload.
    pub fn token(id: u16, present: bool) -> (TokenName, TokenValue<'static>) {
        (Self::name(id), TokenValue::Byte(u8::from(present)))
    }
}

/// The payload at `at`, after a frame's tokens: `None` until its length and
/// all its bytes are there; the payload and where the frame ends.
pub(super) fn payload(
    buf: &[u8],
    at: usize,
    limit: u32,
) -> Result<Option<(&[u8], usize)>, FrameError> {
    let Some(&[a, b, c, d]) = buf.get(at..at + 4) else {
        return Ok(None);
    };
    let length = u32::from_le_bytes([a, b, c, d]);
    if length > limit {
        return Err(FrameError::PayloadOverLimit { length, limit });
    }
    let end = at + 4 + length as usize;
    Ok(buf.get(at + 4..end).map(|payload| (payload, end)))
}

/// A frame's payload, if it has one, and the offset where the frame ends.
pub(super) type Body<'a> = (Option<&'a [u8]>, usize);

/// The tokens of `frame` (each handed to `keep`, but its PayloadPresent,
/// `payload_id`) and the payload they announce, within `payload_limit`:
/// `None` until the payload is all in `buf`; the payload, if any, and
/// where the frame ends. What a request's and a response's decoding share.
pub(super) fn tokens_and_payload<'a>(
    buf: &'a [u8],
    frame: &Metadata<'a>,
    payload_id: u16,
    name: impl Fn(u16) -> Option<&'static str>,
    payload_limit: u32,
    mut keep: impl FnMut(RawToken<'a>) -> Result<(), FrameError>,
) -> Result<Option<Body<'a>>, FrameError> {
    let mut present = PayloadPresent::new(payload_id);
    each_token(
        frame.tokens,
        |id| PayloadPresent::named(payload_id, id).or(name(id)),
        |token| {
            if !present.take(&token)? {
                keep(token)?;
            }
            Ok(())
        },
    )?;
    Ok(match present.present()? {
        false => Some((None, frame.length)),
        true => payload(buf, frame.length, payload_limit)?.map(|(p, end)| (Some(p), end)),
    })
}

/// Writes a frame: the header (L patched once the tokens are written),
/// the tokens `write_tokens` writes, and the payload's length and bytes
/// when there is one. On an error nothing is left written.
pub(super) fn write_frame(
    out: &mut BytesMut,
    word: [u8; 4],
    activity_id: Uuid,
    write_tokens: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
    payload: Option<&[u8]>,
) -> Result<(), EncodeError> {
    let start = out.len();
    let written = write_parts(out, start, word, activity_id, write_tokens, payload);
    if written.is_err() {
        out.truncate(start);
    }
    written
}

fn write_parts(
    out: &mut BytesMut,
    start: usize,
    word: [u8; 4],
    activity_id: Uuid,
    write_tokens: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
    payload: Option<&[u8]>,
) -> Result<(), EncodeError> {
    out.put_u32_le(0);
    out.put_slice(&word);
    out.put_slice(&activity_id.to_bytes_le());
    write_tokens(out)?;
    let length = out.len() - start;
    let length = u32::try_from(length).map_err(|_| EncodeError::FrameTooLong { length })?;
    out[start..start + 4].copy_from_slice(&length.to_le_bytes());
    if let Some(payload) = payload {
        let n = u32::try_from(payload.len()).map_err(|_| EncodeError::FrameTooLong {
            length: out.len() - start + 4 + payload.len(),
        })?;
        out.reserve(4 + payload.len());
        out.put_u32_le(n);
        out.put_slice(payload);
    }
    Ok(())
}
