//! The token types of RNTBD (the Java SDK 4.81.0's `RntbdTokenType`,
//! .NET's `RntbdTokenTypes`): each one's type byte, and how its value is
//! laid out (a fixed size, or a length prefix and that many bytes). See
//! `docs/src/reference/rntbd.md#tokens`.

/// A token's wire type: its type byte, and so how many bytes its value takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenType {
    /// 1 byte; booleans are 0 or 1.
    Byte,
    UShort,
    ULong,
    Long,
    ULongLong,
    LongLong,
    /// 16 bytes, .NET's layout.
    Guid,
    /// UTF-8 after a `u8` length.
    SmallString,
    /// UTF-8 after a `u16` length.
    String,
    /// UTF-8 after a `u32` length.
    ULongString,
    SmallBytes,
    Bytes,
    ULongBytes,
    Float,
    Double,
    /// No value at all.
    Invalid,
}

/// How a type's value is laid out: a fixed number of bytes, or a length
/// prefix of so many bytes followed by that many bytes.
pub(super) enum Layout {
    Fixed(usize),
    Prefixed(usize),
}

impl TokenType {
    pub const ALL: [TokenType; 16] = [
        TokenType::Byte,
        TokenType::UShort,
        TokenType::ULong,
        TokenType::Long,
        TokenType::ULongLong,
        TokenType::LongLong,
        TokenType::Guid,
        TokenType::SmallString,
        TokenType::String,
        TokenType::ULongString,
        TokenType::SmallBytes,
        TokenType::Bytes,
        TokenType::ULongBytes,
        TokenType::Float,
        TokenType::Double,
        TokenType::Invalid,
    ];

    /// The type byte on the wire.
    pub const fn code(self) -> u8 {
        match self {
            TokenType::Byte => 0x00,
            TokenType::UShort => 0x01,
            TokenType::ULong => 0x02,
            TokenType::Long => 0x03,
            TokenType::ULongLong => 0x04,
            TokenType::LongLong => 0x05,
            TokenType::Guid => 0x06,
            TokenType::SmallString => 0x07,
            TokenType::String => 0x08,
            TokenType::ULongString => 0x09,
            TokenType::SmallBytes => 0x0A,
            TokenType::Bytes => 0x0B,
            TokenType::ULongBytes => 0x0C,
            TokenType::Float => 0x0D,
            TokenType::Double => 0x0E,
            TokenType::Invalid => 0xFF,
        }
    }

    /// The type of a type byte; `None` for the bytes no type has
    /// (0x0F-0xFE), whose values' sizes cannot be known.
    pub fn from_code(code: u8) -> Option<TokenType> {
        TokenType::ALL.into_iter().find(|t| t.code() == code)
    }

    pub(super) const fn layout(self) -> Layout {
        match self {
            TokenType::Invalid => Layout::Fixed(0),
            TokenType::Byte => Layout::Fixed(1),
            TokenType::UShort => Layout::Fixed(2),
            TokenType::ULong | TokenType::Long | TokenType::Float => Layout::Fixed(4),
            TokenType::ULongLong | TokenType::LongLong | TokenType::Double => Layout::Fixed(8),
            TokenType::Guid => Layout::Fixed(16),
            TokenType::SmallString | TokenType::SmallBytes => Layout::Prefixed(1),
            TokenType::String | TokenType::Bytes => Layout::Prefixed(2),
            TokenType::ULongString | TokenType::ULongBytes => Layout::Prefixed(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_has_its_code_and_back_and_no_other_byte_is_a_type() {
        for t in TokenType::ALL {
            assert_eq!(TokenType::from_code(t.code()), Some(t));
        }
        assert_eq!(TokenType::Double.code(), 0x0E);
        assert_eq!(TokenType::Invalid.code(), 0xFF);
        for code in 0x0F..=0xFE {
            assert_eq!(TokenType::from_code(code), None, "0x{code:02X}");
        }
    }
}
