//! RNTBD frames as the bench writes and reads them, written from the guide
//! (`docs/src/reference/rntbd.md`, its framing and token tables) rather
//! than from the emulator's codec, so that the bench checks the emulator
//! from outside as the SDKs do: a request frame built token by token (L
//! counts the 24-byte header and the tokens, not the payload), and a
//! response frame cut from the front of a buffer once it is whole, its
//! tokens read by their wire type.

use std::ops::Range;

use bytes::{Bytes, BytesMut};

/// Token wire types (`docs/src/reference/rntbd.md#tokens`).
pub mod wire {
    pub const BYTE: u8 = 0x00;
    pub const ULONG: u8 = 0x02;
    pub const SMALL_STRING: u8 = 0x07;
    pub const STRING: u8 = 0x08;
    pub const BYTES: u8 = 0x0B;
}

/// Request token ids the bench writes (`#request-tokens`).
pub mod request {
    pub const RESOURCE_ID: u16 = 0x0000;
    pub const AUTHORIZATION_TOKEN: u16 = 0x0001;
    pub const PAYLOAD_PRESENT: u16 = 0x0002;
    pub const DATE: u16 = 0x0003;
    pub const SESSION_TOKEN: u16 = 0x0005;
    pub const CONSISTENCY_LEVEL: u16 = 0x0010;
    pub const REPLICA_PATH: u16 = 0x0013;
    pub const DATABASE_NAME: u16 = 0x0015;
    pub const COLLECTION_NAME: u16 = 0x0016;
    pub const DOCUMENT_NAME: u16 = 0x0017;
    pub const CLIENT_VERSION: u16 = 0x0028;
    pub const PARTITION_KEY: u16 = 0x002B;
    pub const TRANSPORT_REQUEST_ID: u16 = 0x004D;
}

/// Response token ids the bench reads (`#response-tokens`).
pub mod response {
    pub const PAYLOAD_PRESENT: u16 = 0x0000;
    pub const SUB_STATUS: u16 = 0x001C;
    pub const TRANSPORT_REQUEST_ID: u16 = 0x0035;
}

/// The context exchange's token ids (`#the-context-exchange`).
pub mod context {
    pub const PROTOCOL_VERSION: u16 = 0x0000;
    pub const CLIENT_VERSION: u16 = 0x0001;
    pub const USER_AGENT: u16 = 0x0002;
    pub const SERVER_AGENT: u16 = 0x0002;
    pub const SERVER_VERSION: u16 = 0x0003;
}

/// Resource and operation type ids (`#resource-and-operation-types`).
pub const DOCUMENT: u16 = 0x03;
pub const CREATE: u16 = 0x01;
pub const READ: u16 = 0x03;
pub const UPSERT: u16 = 0x13;

/// The largest L and response payload the bench reads: the guide's
/// limits for the codec's client side.
pub const MAX_LENGTH: usize = 1 << 20;
pub const MAX_PAYLOAD: usize = 16 << 20;

/// A GUID in .NET's byte layout (`Guid.ToByteArray`): the first three
/// fields little-endian, the last eight bytes as they are.
pub fn guid_bytes(guid: u128) -> [u8; 16] {
    let mut out = guid.to_be_bytes();
    out[0..4].reverse();
    out[4..6].reverse();
    out[6..8].reverse();
    out
}

/// A request frame being written: header, then tokens in the order given.
pub struct RequestFrame {
    bytes: Vec<u8>,
}

impl RequestFrame {
    /// A frame of `resource` and `operation` (both 0: a context request).
    pub fn new(resource: u16, operation: u16, activity: [u8; 16]) -> RequestFrame {
        let mut bytes = Vec::with_capacity(320);
        bytes.extend_from_slice(&[0; 4]);
        bytes.extend_from_slice(&resource.to_le_bytes());
        bytes.extend_from_slice(&operation.to_le_bytes());
        bytes.extend_from_slice(&activity);
        RequestFrame { bytes }
    }

    fn head(&mut self, id: u16, wire: u8) -> &mut Vec<u8> {
        self.bytes.extend_from_slice(&id.to_le_bytes());
        self.bytes.push(wire);
        &mut self.bytes
    }

    pub fn byte(&mut self, id: u16, value: u8) -> &mut Self {
        self.head(id, wire::BYTE).push(value);
        self
    }

    pub fn ulong(&mut self, id: u16, value: u32) -> &mut Self {
        self.head(id, wire::ULONG)
            .extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A SmallString: u8 length, UTF-8 (at most 255 bytes).
    pub fn small_string(&mut self, id: u16, text: &str) -> &mut Self {
        let bytes = self.head(id, wire::SMALL_STRING);
        bytes.push(u8::try_from(text.len()).expect("a SmallString holds 255 bytes at most"));
        bytes.extend_from_slice(text.as_bytes());
        self
    }

    /// A String: u16 length, UTF-8.
    pub fn string(&mut self, id: u16, text: &str) -> &mut Self {
        self.bytes_token(id, wire::STRING, text.as_bytes())
    }

    /// Bytes: u16 length, the bytes.
    pub fn bytes(&mut self, id: u16, value: &[u8]) -> &mut Self {
        self.bytes_token(id, wire::BYTES, value)
    }

    fn bytes_token(&mut self, id: u16, wire: u8, value: &[u8]) -> &mut Self {
        let length = u16::try_from(value.len()).expect("a String holds 64 KiB at most");
        let bytes = self.head(id, wire);
        bytes.extend_from_slice(&length.to_le_bytes());
        bytes.extend_from_slice(value);
        self
    }

    /// The frame's bytes: L filled in, then the payload with its length
    /// when there is one (PayloadPresent must say so).
    pub fn finish(mut self, payload: Option<&[u8]>) -> Vec<u8> {
        let length = self.bytes.len() as u32;
        self.bytes[0..4].copy_from_slice(&length.to_le_bytes());
        if let Some(payload) = payload {
            self.bytes
                .extend_from_slice(&(payload.len() as u32).to_le_bytes());
            self.bytes.extend_from_slice(payload);
        }
        self.bytes
    }
}

/// Whether a payload follows a response's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadRule {
    /// A data response: when PayloadPresent (0x0000, a Byte) is 1.
    Token,
    /// The context response: it has no PayloadPresent; an error (a status
    /// outside 200-399) is followed by its JSON.
    Context,
}

/// A whole response frame.
#[derive(Debug, Clone)]
pub struct ResponseFrame {
    pub status: u32,
    /// The activity id as it came (.NET's layout).
    pub activity: [u8; 16],
    frame: Bytes,
    payload: Option<Range<usize>>,
}

impl ResponseFrame {
    /// Cuts the first whole frame off `buffer`: `Ok(None)` while it is not
    /// whole yet, `Err` when the bytes are no frame (the stream's framing
    /// is then lost).
    pub fn cut(buffer: &mut BytesMut, rule: PayloadRule) -> Result<Option<ResponseFrame>, String> {
        if buffer.len() < 4 {
            return Ok(None);
        }
        let length = u32_at(buffer, 0) as usize;
        if !(24..=MAX_LENGTH).contains(&length) {
            return Err(format!("a response frame of L = {length}"));
        }
        if buffer.len() < length {
            return Ok(None);
        }
        let status = u32_at(buffer, 4);
        let mut present = false;
        for token in Tokens::new(&buffer[24..length]) {
            let (id, wire, value) = token?;
            if rule == PayloadRule::Token && id == response::PAYLOAD_PRESENT && wire == wire::BYTE {
                present = value == [1];
            }
        }
        if rule == PayloadRule::Context {
            present = !(200..400).contains(&status);
        }
        let mut end = length;
        let payload = if present {
            if buffer.len() < length + 4 {
                return Ok(None);
            }
            let size = u32_at(buffer, length) as usize;
            if size > MAX_PAYLOAD {
                return Err(format!("a response payload of {size} bytes"));
            }
            end = length + 4 + size;
            if buffer.len() < end {
                return Ok(None);
            }
            Some(length + 4..end)
        } else {
            None
        };
        let frame = buffer.split_to(end).freeze();
        let mut activity = [0; 16];
        activity.copy_from_slice(&frame[8..24]);
        Ok(Some(ResponseFrame {
            status,
            activity,
            frame,
            payload,
        }))
    }

    /// Each token's id, wire type and value (already checked by `cut`).
    pub fn tokens(&self) -> impl Iterator<Item = Token<'_>> {
        let length = u32_at(&self.frame, 0) as usize;
        Tokens::new(&self.frame[24..length]).map_while(Result::ok)
    }

    pub fn token(&self, id: u16) -> Option<(u8, &[u8])> {
        self.tokens()
            .find(|(i, _, _)| *i == id)
            .map(|(_, wire, value)| (wire, value))
    }

    /// A ULong token's value.
    pub fn ulong(&self, id: u16) -> Option<u32> {
        match self.token(id)? {
            (wire::ULONG, value) => Some(u32::from_le_bytes(value.try_into().ok()?)),
            _ => None,
        }
    }

    /// A (Small)String token's text.
    pub fn text(&self, id: u16) -> Option<&str> {
        match self.token(id)? {
            (wire::SMALL_STRING | wire::STRING, value) => std::str::from_utf8(value).ok(),
            _ => None,
        }
    }

    /// The request's TransportRequestID, echoed.
    pub fn transport_request_id(&self) -> Option<u32> {
        self.ulong(response::TRANSPORT_REQUEST_ID)
    }

    pub fn payload(&self) -> Option<&[u8]> {
        self.payload.clone().map(|range| &self.frame[range])
    }
}

/// A token read: its id, wire type and value.
pub type Token<'a> = (u16, u8, &'a [u8]);

/// The tokens of a whole frame's bytes, request or response (bytes 24..L).
pub fn tokens_of(frame: &[u8]) -> Result<Vec<Token<'_>>, String> {
    if frame.len() < 24 {
        return Err(format!("{} bytes are no frame", frame.len()));
    }
    let length = u32_at(frame, 0) as usize;
    if length < 24 || frame.len() < length {
        return Err(format!("L = {length} in {} bytes", frame.len()));
    }
    Tokens::new(&frame[24..length]).collect()
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
}

/// Reads tokens one by one: id, wire type, value.
struct Tokens<'a> {
    rest: &'a [u8],
}

impl<'a> Tokens<'a> {
    fn new(bytes: &'a [u8]) -> Tokens<'a> {
        Tokens { rest: bytes }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            self.rest = &[];
            return Err("a token runs past L".to_string());
        }
        let (value, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(value)
    }

    fn next_token(&mut self) -> Result<Token<'a>, String> {
        let head = self.take(3)?;
        let (id, wire) = (u16::from_le_bytes([head[0], head[1]]), head[2]);
        let size = match wire {
            0x00 => 1,
            0x01 => 2,
            0x02 | 0x03 | 0x0D => 4,
            0x04 | 0x05 | 0x0E => 8,
            0x06 => 16,
            0x07 | 0x0A => usize::from(self.take(1)?[0]),
            0x08 | 0x0B => {
                let n = self.take(2)?;
                usize::from(u16::from_le_bytes([n[0], n[1]]))
            }
            0x09 | 0x0C => u32_at(self.take(4)?, 0) as usize,
            0xFF => 0,
            other => {
                self.rest = &[];
                return Err(format!("token {id:#06x} has the type byte {other:#04x}"));
            }
        };
        Ok((id, wire, self.take(size)?))
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Result<Token<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        (!self.rest.is_empty()).then(|| self.next_token())
    }
}

#[cfg(test)]
mod tests;
