//! The codec's tests across its parts: the golden frames of the Java SDK's
//! own encoder (`golden.rs`), malformed frames and what each is refused
//! with (`malformed.rs`), and properties over generated and random bytes
//! (`properties.rs`; the codec is not public, so its fuzz properties live
//! here rather than in `tests/it/fuzz.rs`). Each part's own tests sit at
//! the end of its file.

mod golden;
mod malformed;
mod properties;

use uuid::Uuid;

/// The activity id of the golden frames, `01020304-0506-0708-090a-0b0c0d0e0f10`.
fn activity() -> Uuid {
    Uuid::parse_str("01020304-0506-0708-090a-0b0c0d0e0f10").unwrap()
}

/// Bytes written as hex, spaces allowed.
fn h(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// Text's UTF-8 bytes.
fn t(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

/// A frame around `tokens` (L counted here), with bytes 4..8 `kinds`, the
/// golden activity id, and `after` (a payload's length and bytes) after it.
fn frame(kinds: &str, tokens: &[Vec<u8>], after: &[u8]) -> Vec<u8> {
    let tokens = tokens.concat();
    let length = (24 + tokens.len()) as u32;
    [
        length.to_le_bytes().to_vec(),
        h(kinds),
        activity().to_bytes_le().to_vec(),
        tokens,
        after.to_vec(),
    ]
    .concat()
}
