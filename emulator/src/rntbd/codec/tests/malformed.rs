//! Malformed frames, each refused with the error that says what was wrong
//! (the adapter logs it and closes or answers), and what is not malformed:
//! unknown token ids of a known type are skipped, tokens come in any order.

use bytes::BytesMut;

use super::{frame, h, t};
use crate::rntbd::codec::*;

/// A Create on Document (bytes 4..8).
const CREATE: &str = "0300 0100";

/// Why a Create with these tokens, and these bytes after them, is refused.
fn refusal(tokens: &[Vec<u8>], after: &[u8]) -> FrameError {
    let bytes = frame(CREATE, tokens, after);
    match RequestFrame::decode(&bytes) {
        Err(error) => error,
        Ok(read) => panic!("read, not refused: {read:?}"),
    }
}

fn name(id: u16, name: &'static str) -> TokenName {
    TokenName {
        id,
        name: Some(name),
    }
}

#[test]
fn a_length_below_the_header_or_past_the_limit_is_refused_before_more_bytes_come() {
    let error = decode_incoming(&h("17000000")).unwrap_err();
    assert_eq!(error, FrameError::LengthBelowHeader { length: 23 });
    assert_eq!(
        error.to_string(),
        "the frame's length is 23 bytes, less than the 24-byte header it counts"
    );
    let over = MAX_METADATA_BYTES + 1;
    let error = decode_incoming(&over.to_le_bytes()).unwrap_err();
    assert_eq!(
        error,
        FrameError::LengthOverLimit {
            length: over,
            limit: MAX_METADATA_BYTES
        }
    );
    assert_eq!(decode_incoming(&h("18000000")), Ok(None), "24 is a length");
    assert_eq!(decode_incoming(&[]), Ok(None));
}

#[test]
fn a_payload_past_the_limit_is_refused_before_it_arrives() {
    let over = MAX_REQUEST_PAYLOAD_BYTES + 1;
    let error = refusal(&[h("0200 00 01")], &over.to_le_bytes());
    assert_eq!(
        error.to_string(),
        format!(
            "the frame's payload is {over} bytes, past the limit of {MAX_REQUEST_PAYLOAD_BYTES}"
        )
    );
    let at_limit = MAX_REQUEST_PAYLOAD_BYTES;
    let bytes = frame(CREATE, &[h("0200 00 01")], &at_limit.to_le_bytes());
    assert_eq!(
        RequestFrame::decode(&bytes),
        Ok(None),
        "waits for the payload"
    );
}

#[test]
fn a_token_running_past_the_frames_end_is_refused() {
    // SessionToken says 16 bytes; the frame ends after 4 of them.
    let error = refusal(&[h("0200 00 00"), h("0500 08 1000"), t("-1#6")], b"");
    assert_eq!(
        error,
        FrameError::TokenPastEnd {
            token: name(5, "SessionToken"),
            offset: 4
        }
    );
    assert_eq!(
        error.to_string(),
        "token SessionToken (0x0005), at byte 4 of the tokens, runs past the frame's end"
    );
    // Two bytes of a token: no room for its type.
    let error = refusal(&[h("0200 00 00"), h("4d00")], b"");
    assert_eq!(error, FrameError::TokenHeaderPastEnd { offset: 4 });
    // The token's length runs past L although more bytes follow in the buffer.
    let error = refusal(&[h("0200 00 00"), h("0600 08 0400")], b"abcd");
    assert!(matches!(error, FrameError::TokenPastEnd { .. }), "{error}");
}

#[test]
fn an_unknown_type_byte_is_refused_and_an_unknown_id_of_a_known_type_skipped() {
    for type_byte in [0x0Fu8, 0x80, 0xFE] {
        let token = [h("3412"), vec![type_byte], h("00000000")].concat();
        let error = refusal(&[h("0200 00 00"), token], b"");
        assert_eq!(
            error,
            FrameError::UnknownTokenType {
                token: TokenName {
                    id: 0x1234,
                    name: None
                },
                type_byte
            }
        );
    }
    let unknown = [
        h("1e00 00 01"),       // EnableScanInQuery, not in the table
        h("5900 03 ffffffff"), // TimeToLiveInSeconds
        h("9900 ff"),          // any id, Invalid: no value
        h("9a00 0c 03000000 010203"),
        h("9b00 09 02000000"),
        t("ok"),
    ];
    let tokens = [&unknown[..], &[h("0200 00 00"), h("4d00 02 07000000")]].concat();
    let bytes = frame(CREATE, &tokens, b"");
    let (request, used) = RequestFrame::decode(&bytes).unwrap().unwrap();
    assert_eq!(request.tokens.transport_request_id(), Some(7));
    assert_eq!(
        request.tokens.iter().count(),
        1,
        "the unknown ids are skipped"
    );
    assert_eq!(used, 24 + tokens.concat().len());
}

#[test]
fn a_known_token_of_another_type_is_refused() {
    // PageSize is a ULong; here a String.
    let error = refusal(&[h("0200 00 00"), h("0400 08 0200"), t("10")], b"");
    assert_eq!(
        error.to_string(),
        "token PageSize (0x0004) was sent as String; the protocol declares it ULong"
    );
    let error = refusal(&[h("0200 02 01000000")], b"");
    assert_eq!(
        error,
        FrameError::WrongTokenType {
            token: name(2, "PayloadPresent"),
            expected: TokenType::Byte,
            found: TokenType::ULong
        }
    );
}

#[test]
fn payload_present_is_required_once_and_boolean() {
    let error = refusal(&[h("4d00 02 01000000")], b"");
    assert_eq!(
        error.to_string(),
        "token PayloadPresent (0x0002) is required and absent"
    );
    let error = refusal(&[h("0200 00 00"), h("0200 00 00")], b"");
    assert_eq!(
        error,
        FrameError::DuplicateToken {
            token: name(2, "PayloadPresent")
        }
    );
    let error = refusal(&[h("0200 00 02")], b"");
    assert_eq!(error, FrameError::PayloadPresentNotBoolean { value: 2 });
}

#[test]
fn a_known_token_twice_is_refused() {
    let session = [h("0500 08 0400"), t("-1#6")].concat();
    let error = refusal(&[session.clone(), h("0200 00 00"), session], b"");
    assert_eq!(
        error.to_string(),
        "token SessionToken (0x0005) appears twice"
    );
}

#[test]
fn text_that_is_not_utf8_is_refused() {
    let error = refusal(&[h("0200 00 00"), h("1500 08 0200 c328")], b"");
    assert_eq!(
        error.to_string(),
        "token DatabaseName (0x0015) is not UTF-8"
    );
}

#[test]
fn tokens_come_in_any_order_and_a_payload_only_when_present_says_so() {
    let tokens = [
        h("4d00 02 09000000"),
        h("1500 08 0300"),
        t("db1"),
        h("0200 00 00"),
    ];
    let after = h("15000000");
    let bytes = frame(CREATE, &tokens, &after);
    let (read, used) = RequestFrame::decode(&bytes).unwrap().unwrap();
    assert_eq!(read.payload, None);
    assert_eq!(
        used,
        bytes.len() - after.len(),
        "what follows is the next frame's"
    );
    assert_eq!(read.tokens.database_name(), Some("db1"));
    let mut out = BytesMut::new();
    read.encode(&mut out).unwrap();
    let sorted = [
        h("0200 00 00"),
        h("1500 08 0300"),
        t("db1"),
        h("4d00 02 09000000"),
    ];
    assert_eq!(
        out.as_ref(),
        frame(CREATE, &sorted, b""),
        "written in ascending ids"
    );
}

#[test]
fn a_connection_tells_the_context_request_from_a_data_request() {
    let context = frame(
        "0000 0000",
        &[h("0000 02 01000000"), h("0100 07 01"), t("v")],
        b"",
    );
    assert!(matches!(
        decode_incoming(&context),
        Ok(Some((Incoming::Context(_), _)))
    ));
    // Resource 0 with another operation is a data request (and this one
    // lacks PayloadPresent: its id 0x0002 is the context's UserAgent).
    let data = frame(
        "0000 0300",
        &[h("0000 02 01000000"), h("0200 07 01"), t("u")],
        b"",
    );
    let error = decode_incoming(&data).unwrap_err();
    assert!(
        matches!(error, FrameError::WrongTokenType { .. }),
        "{error}"
    );
    // Unknown resource and operation ids are kept as numbers.
    let odd = frame("ff00 7700", &[h("0200 00 00")], b"");
    let Ok(Some((Incoming::Request(read), _))) = decode_incoming(&odd) else {
        panic!("a data request");
    };
    assert_eq!(read.resource_type, ResourceType::Other(0xFF));
    assert_eq!(read.operation_type, OperationType::Other(0x77));
}

#[test]
fn a_frame_that_cannot_be_written_leaves_the_buffer_as_it_was() {
    let mut tokens = ResponseTokens::new();
    let long = "s".repeat(300);
    tokens.set_lsn(1).set_server_date_time_utc(&long);
    let response = ResponseFrame {
        status: 200,
        activity_id: super::activity(),
        tokens,
        payload: Some(b"{}"),
    };
    let mut out = BytesMut::from(&b"earlier frames"[..]);
    let error = response.encode(&mut out).unwrap_err();
    assert_eq!(out.as_ref(), b"earlier frames");
    assert!(
        matches!(error, EncodeError::ValueTooLong { max: 255, .. }),
        "{error}"
    );
}
