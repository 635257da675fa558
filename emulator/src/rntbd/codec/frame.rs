//! The request frame and the response frame: each decoded from the start
//! of a growing buffer (`Ok(None)` while more bytes are needed, the frame
//! and the bytes it took once whole, a [`FrameError`] for bytes no frame
//! is) and encoded onto one. A request frame is L, the resource and
//! operation types, the activity id, the tokens of `request_tokens.rs`,
//! and a payload only when PayloadPresent (0x0002) is 1 (the Java SDK
//! 4.81.0's `RntbdRequest.encode`, `RntbdRequestFrame`); a response frame
//! is L, the status, the activity id, the tokens of `response_tokens.rs`,
//! and a payload only when PayloadPresent (0x0000) is 1
//! (`RntbdResponse.decode`). Tokens are accepted in any order and written
//! in ascending id order. See `docs/src/reference/rntbd.md#framing`.

use bytes::BytesMut;
use uuid::Uuid;

use super::error::{EncodeError, FrameError};
use super::kinds::{OperationType, ResourceType};
use super::request_tokens::{RequestToken, RequestTokens};
use super::response_tokens::{ResponseToken, ResponseTokens};
use super::wire::{
    metadata, tokens_and_payload, write_frame, PayloadPresent, MAX_REQUEST_PAYLOAD_BYTES,
    MAX_RESPONSE_PAYLOAD_BYTES,
};

/// A request: what a client asks of a replica.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestFrame<'a> {
    pub resource_type: ResourceType,
    pub operation_type: OperationType,
    pub activity_id: Uuid,
    pub tokens: RequestTokens<'a>,
    /// The body (UTF-8 JSON, or SQL for SqlQuery), when PayloadPresent is 1.
    pub payload: Option<&'a [u8]>,
}

impl<'a> RequestFrame<'a> {
    /// Decodes the data request at the start of `buf`. Bytes 4..8 are not
    /// looked at for a context request: a connection's frames are told
    /// apart by `decode_incoming`.
    pub fn decode(buf: &'a [u8]) -> Result<Option<(RequestFrame<'a>, usize)>, FrameError> {
        let Some(frame) = metadata(buf)? else {
            return Ok(None);
        };
        let mut tokens = RequestTokens::new();
        let Some((payload, end)) = tokens_and_payload(
            buf,
            &frame,
            PayloadPresent::REQUEST,
            RequestToken::name_of,
            MAX_REQUEST_PAYLOAD_BYTES,
            |token| tokens.keep(token),
        )?
        else {
            return Ok(None);
        };
        let [r0, r1, o0, o1] = frame.word;
        Ok(Some((
            RequestFrame {
                resource_type: ResourceType::from_id(u16::from_le_bytes([r0, r1])),
                operation_type: OperationType::from_id(u16::from_le_bytes([o0, o1])),
                activity_id: frame.activity_id,
                tokens,
                payload,
            },
            end,
        )))
    }

    /// Appends the frame to `out` (left as it was on an error).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        let [r0, r1] = self.resource_type.id().to_le_bytes();
        let [o0, o1] = self.operation_type.id().to_le_bytes();
        let present = PayloadPresent::token(PayloadPresent::REQUEST, self.payload.is_some());
        write_frame(
            out,
            [r0, r1, o0, o1],
            self.activity_id,
            |out| self.tokens.write(out, Some(present)),
            self.payload,
        )
    }
}

/// A response: a replica's answer, matched to its request by the
/// TransportRequestID token.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseFrame<'a> {
    /// The HTTP status the answer stands for (200, 201, 304, 404, 410...).
    pub status: u32,
    /// The request's, echoed.
    pub activity_id: Uuid,
    pub tokens: ResponseTokens<'a>,
    /// The body, when there is one (PayloadPresent 1).
    pub payload: Option<&'a [u8]>,
}

impl<'a> ResponseFrame<'a> {
    /// Decodes the response at the start of `buf` (the client's side: the
    /// tests and the bench).
    pub fn decode(buf: &'a [u8]) -> Result<Option<(ResponseFrame<'a>, usize)>, FrameError> {
        let Some(frame) = metadata(buf)? else {
            return Ok(None);
        };
        let mut tokens = ResponseTokens::new();
        let Some((payload, end)) = tokens_and_payload(
            buf,
            &frame,
            PayloadPresent::RESPONSE,
            ResponseToken::name_of,
            MAX_RESPONSE_PAYLOAD_BYTES,
            |token| tokens.keep(token),
        )?
        else {
            return Ok(None);
        };
        Ok(Some((
            ResponseFrame {
                status: u32::from_le_bytes(frame.word),
                activity_id: frame.activity_id,
                tokens,
                payload,
            },
            end,
        )))
    }

    /// Appends the frame to `out` (left as it was on an error).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        let present = PayloadPresent::token(PayloadPresent::RESPONSE, self.payload.is_some());
        write_frame(
            out,
            self.status.to_le_bytes(),
            self.activity_id,
            |out| self.tokens.write(out, Some(present)),
            self.payload,
        )
    }
}
