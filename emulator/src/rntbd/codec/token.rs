//! One RNTBD token: a `u16` id, a type byte (`token_type.rs`), a value.
//! The values ([`TokenValue`], text and bytes borrowed from the frame),
//! reading one token from bytes ([`read_token`]) and writing one
//! ([`write_token`]).
//! Integers are little-endian; a GUID is in .NET's layout
//! (`Uuid::to_bytes_le`, the SDK's `RntbdUUID`). See
//! `docs/src/reference/rntbd.md#tokens`.

use bytes::{BufMut, BytesMut};
use uuid::Uuid;

use super::error::{EncodeError, FrameError, TokenName};
use super::token_type::{Layout, TokenType};

/// A token's value. Text and bytes borrow the frame they were read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TokenValue<'a> {
    Byte(u8),
    UShort(u16),
    ULong(u32),
    Long(i32),
    ULongLong(u64),
    LongLong(i64),
    Guid(Uuid),
    SmallString(&'a str),
    String(&'a str),
    ULongString(&'a str),
    SmallBytes(&'a [u8]),
    Bytes(&'a [u8]),
    ULongBytes(&'a [u8]),
    Float(f32),
    Double(f64),
    Invalid,
}

impl<'a> TokenValue<'a> {
    pub fn token_type(&self) -> TokenType {
        match self {
            TokenValue::Byte(_) => TokenType::Byte,
            TokenValue::UShort(_) => TokenType::UShort,
            TokenValue::ULong(_) => TokenType::ULong,
            TokenValue::Long(_) => TokenType::Long,
            TokenValue::ULongLong(_) => TokenType::ULongLong,
            TokenValue::LongLong(_) => TokenType::LongLong,
            TokenValue::Guid(_) => TokenType::Guid,
            TokenValue::SmallString(_) => TokenType::SmallString,
            TokenValue::String(_) => TokenType::String,
            TokenValue::ULongString(_) => TokenType::ULongString,
            TokenValue::SmallBytes(_) => TokenType::SmallBytes,
            TokenValue::Bytes(_) => TokenType::Bytes,
            TokenValue::ULongBytes(_) => TokenType::ULongBytes,
            TokenValue::Float(_) => TokenType::Float,
            TokenValue::Double(_) => TokenType::Double,
            TokenValue::Invalid => TokenType::Invalid,
        }
    }

    /// The bytes of a text or bytes value (without its length prefix).
    fn variable(&self) -> Option<&'a [u8]> {
        match *self {
            TokenValue::SmallString(s) | TokenValue::String(s) | TokenValue::ULongString(s) => {
                Some(s.as_bytes())
            }
            TokenValue::SmallBytes(b) | TokenValue::Bytes(b) | TokenValue::ULongBytes(b) => Some(b),
            _ => None,
        }
    }

    /// The bytes this value takes after the token's id and type.
    pub fn encoded_len(&self) -> usize {
        match self.token_type().layout() {
            Layout::Fixed(n) => n,
            Layout::Prefixed(n) => n + self.variable().map_or(0, <[u8]>::len),
        }
    }
}

/// The three bytes before every value: the id and the type byte.
pub const TOKEN_HEADER_BYTES: usize = 3;

/// A token as read: its id, its wire type and its value's bytes (after any
/// length prefix), not yet interpreted, so that an unknown id is skipped
/// without looking at its value. Made only by [`read_token`], which checks
/// that the value's bytes are as many as its type takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawToken<'a> {
    id: u16,
    token_type: TokenType,
    value: &'a [u8],
}

impl<'a> RawToken<'a> {
    pub fn id(&self) -> u16 {
        self.id
    }

    pub fn token_type(&self) -> TokenType {
        self.token_type
    }

    /// The value, as its wire type reads it; the one failure is text that
    /// is not UTF-8.
    pub fn value(&self) -> Result<TokenValue<'a>, std::str::Utf8Error> {
        let v = self.value;
        Ok(match self.token_type {
            TokenType::Byte => TokenValue::Byte(v[0]),
            TokenType::UShort => TokenValue::UShort(u16::from_le_bytes(le(v))),
            TokenType::ULong => TokenValue::ULong(u32::from_le_bytes(le(v))),
            TokenType::Long => TokenValue::Long(i32::from_le_bytes(le(v))),
            TokenType::ULongLong => TokenValue::ULongLong(u64::from_le_bytes(le(v))),
            TokenType::LongLong => TokenValue::LongLong(i64::from_le_bytes(le(v))),
            TokenType::Guid => TokenValue::Guid(Uuid::from_bytes_le(le(v))),
            TokenType::SmallString => TokenValue::SmallString(std::str::from_utf8(v)?),
            TokenType::String => TokenValue::String(std::str::from_utf8(v)?),
            TokenType::ULongString => TokenValue::ULongString(std::str::from_utf8(v)?),
            TokenType::SmallBytes => TokenValue::SmallBytes(v),
            TokenType::Bytes => TokenValue::Bytes(v),
            TokenType::ULongBytes => TokenValue::ULongBytes(v),
            TokenType::Float => TokenValue::Float(f32::from_le_bytes(le(v))),
            TokenType::Double => TokenValue::Double(f64::from_le_bytes(le(v))),
            TokenType::Invalid => TokenValue::Invalid,
        })
    }
}

/// The first `N` bytes of a fixed-size value (`read_token` saw them there).
fn le<const N: usize>(value: &[u8]) -> [u8; N] {
    let mut bytes = [0; N];
    bytes.copy_from_slice(&value[..N]);
    bytes
}

/// Reads the token at the start of `bytes` (a frame's tokens from some
/// offset to the frame's end, `offset` saying where, for errors): the token
/// and the bytes it takes. `name` names a known id in errors.
pub fn read_token(
    bytes: &[u8],
    offset: usize,
    name: impl Fn(u16) -> Option<&'static str>,
) -> Result<(RawToken<'_>, usize), FrameError> {
    let [id_low, id_high, type_byte, ..] = *bytes else {
        return Err(FrameError::TokenHeaderPastEnd { offset });
    };
    let id = u16::from_le_bytes([id_low, id_high]);
    let token = TokenName { id, name: name(id) };
    let Some(token_type) = TokenType::from_code(type_byte) else {
        return Err(FrameError::UnknownTokenType { token, type_byte });
    };
    let rest = &bytes[TOKEN_HEADER_BYTES..];
    let past_end = FrameError::TokenPastEnd { token, offset };
    let (start, len) = match token_type.layout() {
        Layout::Fixed(n) => (0, n),
        Layout::Prefixed(n) => {
            let prefix = rest.get(..n).ok_or(past_end.clone())?;
            let mut le = [0u8; 8];
            le[..n].copy_from_slice(prefix);
            let len = usize::try_from(u64::from_le_bytes(le)).map_err(|_| past_end.clone())?;
            (n, len)
        }
    };
    let end = start.checked_add(len).ok_or(past_end.clone())?;
    let value = rest.get(start..end).ok_or(past_end)?;
    Ok((
        RawToken {
            id,
            token_type,
            value,
        },
        TOKEN_HEADER_BYTES + end,
    ))
}

/// Writes one token: id, type byte, value. A text or bytes value longer
/// than its type's length prefix can say is refused, and nothing written.
pub fn write_token(
    out: &mut BytesMut,
    token: TokenName,
    value: &TokenValue<'_>,
) -> Result<(), EncodeError> {
    let token_type = value.token_type();
    let prefix = match token_type.layout() {
        Layout::Prefixed(n) => {
            let length = value.variable().map_or(0, <[u8]>::len);
            let max = match n {
                1 => u8::MAX as usize,
                2 => u16::MAX as usize,
                _ => u32::MAX as usize,
            };
            if length > max {
                return Err(EncodeError::ValueTooLong {
                    token,
                    token_type,
                    length,
                    max,
                });
            }
            Some((n, length))
        }
        Layout::Fixed(_) => None,
    };
    out.reserve(TOKEN_HEADER_BYTES + value.encoded_len());
    out.put_u16_le(token.id);
    out.put_u8(token_type.code());
    if let Some((n, length)) = prefix {
        // `length` fits `n` bytes: checked above.
        out.put_slice(&(length as u64).to_le_bytes()[..n]);
    }
    match *value {
        TokenValue::Byte(v) => out.put_u8(v),
        TokenValue::UShort(v) => out.put_u16_le(v),
        TokenValue::ULong(v) => out.put_u32_le(v),
        TokenValue::Long(v) => out.put_i32_le(v),
        TokenValue::ULongLong(v) => out.put_u64_le(v),
        TokenValue::LongLong(v) => out.put_i64_le(v),
        TokenValue::Guid(v) => out.put_slice(&v.to_bytes_le()),
        TokenValue::Float(v) => out.put_f32_le(v),
        TokenValue::Double(v) => out.put_f64_le(v),
        TokenValue::Invalid => {}
        ref text_or_bytes => out.put_slice(text_or_bytes.variable().unwrap_or_default()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_names(_: u16) -> Option<&'static str> {
        None
    }

    /// One value of every type, at the edges of its range.
    fn samples() -> Vec<TokenValue<'static>> {
        let guid = Uuid::parse_str("01020304-0506-0708-090a-0b0c0d0e0f10").unwrap();
        vec![
            TokenValue::Byte(0xFF),
            TokenValue::UShort(0xBEEF),
            TokenValue::ULong(u32::MAX),
            TokenValue::Long(i32::MIN),
            TokenValue::ULongLong(u64::MAX),
            TokenValue::LongLong(-6),
            TokenValue::Guid(guid),
            TokenValue::SmallString("2020-07-15"),
            TokenValue::String("é, ü: UTF-8"),
            TokenValue::ULongString(""),
            TokenValue::SmallBytes(&[1, 2, 3]),
            TokenValue::Bytes(&[0xD9, 0x8D, 0x28, 0x00]),
            TokenValue::ULongBytes(&[0; 300]),
            TokenValue::Float(-1.5),
            TokenValue::Double(5.71),
            TokenValue::Invalid,
        ]
    }

    #[test]
    fn the_samples_hold_every_type() {
        let types: Vec<TokenType> = samples().iter().map(TokenValue::token_type).collect();
        assert_eq!(types, TokenType::ALL);
    }

    #[test]
    fn every_type_round_trips_and_takes_what_it_says() {
        for (i, value) in samples().into_iter().enumerate() {
            let mut out = BytesMut::new();
            let name = TokenName {
                id: i as u16,
                name: None,
            };
            write_token(&mut out, name, &value).unwrap();
            assert_eq!(out.len(), TOKEN_HEADER_BYTES + value.encoded_len());
            out.extend_from_slice(b"next");
            let (token, used) = read_token(&out, 0, no_names).unwrap();
            assert_eq!(used, out.len() - 4, "{value:?}");
            assert_eq!(
                (token.id(), token.token_type()),
                (i as u16, value.token_type())
            );
            assert_eq!(token.value(), Ok(value));
        }
    }

    #[test]
    fn integers_are_little_endian_and_guids_in_the_dotnet_layout() {
        let guid = Uuid::parse_str("01020304-0506-0708-090a-0b0c0d0e0f10").unwrap();
        let mut out = BytesMut::new();
        let name = TokenName {
            id: 0x004D,
            name: None,
        };
        write_token(&mut out, name, &TokenValue::ULong(1)).unwrap();
        write_token(&mut out, name, &TokenValue::Guid(guid)).unwrap();
        write_token(&mut out, name, &TokenValue::String("db1")).unwrap();
        assert_eq!(
            out.as_ref(),
            [
                &[0x4D, 0x00, 0x02, 1, 0, 0, 0][..],
                &[0x4D, 0x00, 0x06, 4, 3, 2, 1, 6, 5, 8, 7, 9, 10, 11, 12, 13, 14, 15, 16],
                &[0x4D, 0x00, 0x08, 3, 0, b'd', b'b', b'1'],
            ]
            .concat()
        );
    }

    #[test]
    fn a_value_past_its_length_prefix_is_refused_and_nothing_written() {
        let name = TokenName {
            id: 0x0039,
            name: Some("ServerDateTimeUtc"),
        };
        let mut out = BytesMut::from(&b"kept"[..]);
        let fits = "x".repeat(255);
        write_token(&mut out, name, &TokenValue::SmallString(&fits)).unwrap();
        assert_eq!(out.len(), 4 + 3 + 1 + 255);
        let long = "x".repeat(256);
        let error = write_token(&mut out, name, &TokenValue::SmallString(&long)).unwrap_err();
        assert_eq!(out.len(), 4 + 3 + 1 + 255, "nothing more written");
        assert_eq!(
            error.to_string(),
            "token ServerDateTimeUtc (0x0039)'s value is 256 bytes; a SmallString holds at most 255"
        );
        let bytes = vec![0; 65_536];
        assert!(write_token(&mut out, name, &TokenValue::Bytes(&bytes)).is_err());
        assert!(write_token(&mut out, name, &TokenValue::ULongBytes(&bytes)).is_ok());
    }

    #[test]
    fn a_token_cut_short_or_of_no_type_is_refused() {
        let full = [0x05, 0x00, 0x08, 0x04, 0x00, b'-', b'1', b'#', b'6'];
        for cut in 0..full.len() {
            let error = read_token(&full[..cut], 10, no_names).unwrap_err();
            let expected = if cut < TOKEN_HEADER_BYTES {
                FrameError::TokenHeaderPastEnd { offset: 10 }
            } else {
                FrameError::TokenPastEnd {
                    token: TokenName { id: 5, name: None },
                    offset: 10,
                }
            };
            assert_eq!(error, expected, "cut at {cut}");
        }
        for type_byte in [0x0F, 0x7F, 0x80, 0xFE] {
            let error = read_token(&[0x99, 0x00, type_byte, 0, 0, 0, 0], 0, no_names).unwrap_err();
            assert!(
                matches!(error, FrameError::UnknownTokenType { type_byte: t, .. } if t == type_byte),
                "{error}"
            );
        }
    }

    #[test]
    fn invalid_has_no_value_and_text_must_be_utf8() {
        let (token, used) = read_token(&[0x2D, 0x00, 0xFF, 0xAA], 0, no_names).unwrap();
        assert_eq!((used, token.value()), (3, Ok(TokenValue::Invalid)));
        let (token, _) = read_token(&[0x01, 0x00, 0x07, 0x02, 0xC3, 0x28], 0, no_names).unwrap();
        assert!(token.value().is_err());
        let (token, _) = read_token(&[0x01, 0x00, 0x0A, 0x02, 0xC3, 0x28], 0, no_names).unwrap();
        assert_eq!(token.value(), Ok(TokenValue::SmallBytes(&[0xC3, 0x28])));
    }
}
