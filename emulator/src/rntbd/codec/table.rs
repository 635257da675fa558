//! The tables of known token ids, each written once as rows of (name, id,
//! wire type, getter, setter): [`token_table!`] makes of them the enum of a
//! frame kind's known tokens and the struct that holds their values. Each
//! token gets a getter and a setter whose Rust type follows from its
//! declared wire type ([`value_type!`]), so a known token cannot be written
//! with another type than the one the client slices it with, and a frame
//! read keeps a known token only when it came with its declared type.

/// The Rust type of a wire type's value (`&'a str` for the text types).
macro_rules! value_type {
    ($lt:lifetime, Byte) => { u8 };
    ($lt:lifetime, UShort) => { u16 };
    ($lt:lifetime, ULong) => { u32 };
    ($lt:lifetime, Long) => { i32 };
    ($lt:lifetime, ULongLong) => { u64 };
    ($lt:lifetime, LongLong) => { i64 };
    ($lt:lifetime, Guid) => { uuid::Uuid };
    ($lt:lifetime, SmallString) => { &$lt str };
    ($lt:lifetime, String) => { &$lt str };
    ($lt:lifetime, ULongString) => { &$lt str };
    ($lt:lifetime, SmallBytes) => { &$lt [u8] };
    ($lt:lifetime, Bytes) => { &$lt [u8] };
    ($lt:lifetime, ULongBytes) => { &$lt [u8] };
    ($lt:lifetime, Float) => { f32 };
    ($lt:lifetime, Double) => { f64 };
}

/// A table of known tokens: `pub enum Name;`, `pub struct Values;`, then
/// one row per token, in ascending id order (a test of each table checks
/// it: frames are written in the table's order, as the SDK's golden
/// frames are):
/// `Variant = 0x0013, LongLong, getter, setter;`.
macro_rules! token_table {
    (
        $(#[$enum_doc:meta])*
        pub enum $Token:ident;
        $(#[$struct_doc:meta])*
        pub struct $Tokens:ident;
        $(
            $(#[$doc:meta])*
            $Variant:ident = $id:literal, $Type:ident, $get:ident, $set:ident;
        )+
    ) => {
        $(#[$enum_doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $Token {
            $( $(#[$doc])* $Variant, )+
        }

        impl $Token {
            /// Every token of the table, in its order.
            pub const ALL: &'static [$Token] = &[$($Token::$Variant),+];
            pub const COUNT: usize = $Token::ALL.len();

            pub const fn id(self) -> u16 {
                match self {
                    $($Token::$Variant => $id,)+
                }
            }

            /// The type the protocol declares, with which the client reads it.
            pub const fn token_type(self) -> $crate::rntbd::codec::token_type::TokenType {
                match self {
                    $($Token::$Variant => $crate::rntbd::codec::token_type::TokenType::$Type,)+
                }
            }

            /// The name the SDK's `RntbdConstants` gives it.
            pub const fn name(self) -> &'static str {
                match self {
                    $($Token::$Variant => stringify!($Variant),)+
                }
            }

            pub const fn from_id(id: u16) -> Option<$Token> {
                match id {
                    $($id => Some($Token::$Variant),)+
                    _ => None,
                }
            }

            /// The name of a known id, for errors.
            pub fn name_of(id: u16) -> Option<&'static str> {
                $Token::from_id(id).map($Token::name)
            }

            pub fn token_name(self) -> $crate::rntbd::codec::error::TokenName {
                $crate::rntbd::codec::error::TokenName {
                    id: self.id(),
                    name: Some(self.name()),
                }
            }
        }

        $(#[$struct_doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $Tokens<'a> {
            values: [Option<$crate::rntbd::codec::token::TokenValue<'a>>; $Token::COUNT],
        }

        impl Default for $Tokens<'_> {
            fn default() -> Self {
                $Tokens { values: [None; $Token::COUNT] }
            }
        }

        impl<'a> $Tokens<'a> {
            pub fn new() -> Self {
                Self::default()
            }

            /// A token's value, when present.
            pub fn get(&self, token: $Token) -> Option<$crate::rntbd::codec::token::TokenValue<'a>> {
                self.values[token as usize]
            }

            /// Takes a token out; its value, when it was present.
            pub fn remove(&mut self, token: $Token) -> Option<$crate::rntbd::codec::token::TokenValue<'a>> {
                self.values[token as usize].take()
            }

            /// The present tokens, in the table's order (ascending ids).
            pub fn iter(&self) -> impl Iterator<Item = ($Token, $crate::rntbd::codec::token::TokenValue<'a>)> + '_ {
                $Token::ALL
                    .iter()
                    .zip(&self.values)
                    .filter_map(|(token, value)| value.map(|value| (*token, value)))
            }

            /// Sets a token from a value of any type: refused (the type the
            /// token must have) when the value's type is another. The typed
            /// setters are the way; this one serves tables of values.
            pub fn set(
                &mut self,
                token: $Token,
                value: $crate::rntbd::codec::token::TokenValue<'a>,
            ) -> Result<&mut Self, $crate::rntbd::codec::token_type::TokenType> {
                if value.token_type() != token.token_type() {
                    return Err(token.token_type());
                }
                self.values[token as usize] = Some(value);
                Ok(self)
            }

            $(
                pub fn $get(&self) -> Option<$crate::rntbd::codec::table::value_type!('a, $Type)> {
                    match self.values[$Token::$Variant as usize] {
                        Some($crate::rntbd::codec::token::TokenValue::$Type(value)) => Some(value),
                        _ => None,
                    }
                }

                pub fn $set(&mut self, value: $crate::rntbd::codec::table::value_type!('a, $Type)) -> &mut Self {
                    self.values[$Token::$Variant as usize] =
                        Some($crate::rntbd::codec::token::TokenValue::$Type(value));
                    self
                }
            )+

            /// Keeps a token read from a frame: a known id with its
            /// declared type, once; an unknown id is skipped (its wire type
            /// said how far).
            pub(super) fn keep(
                &mut self,
                raw: $crate::rntbd::codec::token::RawToken<'a>,
            ) -> Result<(), $crate::rntbd::codec::error::FrameError> {
                use $crate::rntbd::codec::error::FrameError;
                let Some(token) = $Token::from_id(raw.id()) else {
                    return Ok(());
                };
                let name = token.token_name();
                if raw.token_type() != token.token_type() {
                    return Err(FrameError::WrongTokenType {
                        token: name,
                        expected: token.token_type(),
                        found: raw.token_type(),
                    });
                }
                let value = raw.value().map_err(|_| FrameError::NotUtf8 { token: name })?;
                let slot = &mut self.values[token as usize];
                if slot.is_some() {
                    return Err(FrameError::DuplicateToken { token: name });
                }
                *slot = Some(value);
                Ok(())
            }

            /// Writes the present tokens in the table's order, `extra` (the
            /// frame's PayloadPresent) in its id's place among them.
            pub(super) fn write(
                &self,
                out: &mut bytes::BytesMut,
                mut extra: Option<(
                    $crate::rntbd::codec::error::TokenName,
                    $crate::rntbd::codec::token::TokenValue<'_>,
                )>,
            ) -> Result<(), $crate::rntbd::codec::error::EncodeError> {
                use $crate::rntbd::codec::token::write_token;
                for (token, value) in self.iter() {
                    if let Some((name, value)) = extra.filter(|(name, _)| name.id < token.id()) {
                        write_token(out, name, &value)?;
                        extra = None;
                    }
                    write_token(out, token.token_name(), &value)?;
                }
                if let Some((name, value)) = extra {
                    write_token(out, name, &value)?;
                }
                Ok(())
            }
        }
    };
}

pub(super) use token_table;
pub(super) use value_type;
