//! What can be wrong with an RNTBD frame read from a connection
//! ([`FrameError`]), and why one the emulator writes may not fit the wire
//! ([`EncodeError`]). Each says what was wrong in words: the adapter logs
//! it and, where the protocol has an answer for it, answers it; otherwise
//! it closes the connection.

use std::fmt;

use super::token_type::TokenType;

/// A token named in an error: its id, and its name when the table of the
/// frame's kind knows the id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenName {
    pub id: u16,
    pub name: Option<&'static str>,
}

impl fmt::Display for TokenName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(name) => write!(f, "token {name} (0x{:04X})", self.id),
            None => write!(f, "token 0x{:04X}", self.id),
        }
    }
}

/// Why bytes read from a connection are not a frame. Once one is found the
/// connection's framing is lost: nothing after it can be trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The length field is below the 24 bytes of the header it counts.
    LengthBelowHeader { length: u32 },
    /// The length field is past [`MAX_METADATA_BYTES`](super::MAX_METADATA_BYTES).
    LengthOverLimit { length: u32, limit: u32 },
    /// The payload's length is past the limit of the frame's direction.
    PayloadOverLimit { length: u32, limit: u32 },
    /// A token's header (id and type, three bytes) starts within the frame
    /// but does not end in it.
    TokenHeaderPastEnd { offset: usize },
    /// A token's value (or its length prefix) runs past the frame's length.
    TokenPastEnd { token: TokenName, offset: usize },
    /// A type byte no token type has: the value's size cannot be known.
    UnknownTokenType { token: TokenName, type_byte: u8 },
    /// A known token sent with another type than the protocol declares.
    WrongTokenType {
        token: TokenName,
        expected: TokenType,
        found: TokenType,
    },
    /// A known token sent twice: which one holds would be a guess.
    DuplicateToken { token: TokenName },
    /// A token the frame cannot do without is absent.
    MissingToken { token: TokenName },
    /// A text token whose bytes are not UTF-8.
    NotUtf8 { token: TokenName },
    /// PayloadPresent holds something other than 0 or 1.
    PayloadPresentNotBoolean { value: u8 },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::LengthBelowHeader { length } => write!(
                f,
                "the frame's length is {length} bytes, less than the 24-byte header it counts"
            ),
            FrameError::LengthOverLimit { length, limit } => write!(
                f,
                "the frame's length is {length} bytes of header and tokens, past the limit of {limit}"
            ),
            FrameError::PayloadOverLimit { length, limit } => write!(
                f,
                "the frame's payload is {length} bytes, past the limit of {limit}"
            ),
            FrameError::TokenHeaderPastEnd { offset } => write!(
                f,
                "a token starting at byte {offset} of the tokens has no room for its id and type before the frame's end"
            ),
            FrameError::TokenPastEnd { token, offset } => write!(
                f,
                "{token}, at byte {offset} of the tokens, runs past the frame's end"
            ),
            FrameError::UnknownTokenType { token, type_byte } => write!(
                f,
                "{token} has type byte 0x{type_byte:02X}, which no token type has (0x00-0x0E, 0xFF)"
            ),
            FrameError::WrongTokenType {
                token,
                expected,
                found,
            } => write!(
                f,
                "{token} was sent as {found:?}; the protocol declares it {expected:?}"
            ),
            FrameError::DuplicateToken { token } => write!(f, "{token} appears twice"),
            FrameError::MissingToken { token } => write!(f, "{token} is required and absent"),
            FrameError::NotUtf8 { token } => write!(f, "{token} is not UTF-8"),
            FrameError::PayloadPresentNotBoolean { value } => write!(
                f,
                "PayloadPresent is {value}; it must be 0 (no payload) or 1 (a payload follows)"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// Why a frame cannot be written: a value longer than its type's length
/// prefix can say, or a frame whose length no `u32` holds. Nothing is
/// written then (the buffer is left as it was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    ValueTooLong {
        token: TokenName,
        token_type: TokenType,
        length: usize,
        max: usize,
    },
    FrameTooLong {
        length: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::ValueTooLong {
                token,
                token_type,
                length,
                max,
            } => write!(
                f,
                "{token}'s value is {length} bytes; a {token_type:?} holds at most {max}"
            ),
            EncodeError::FrameTooLong { length } => write!(
                f,
                "the frame would be {length} bytes, past what its 32-bit length can say"
            ),
        }
    }
}

impl std::error::Error for EncodeError {}
