//! The frames against the guide's golden frames
//! (`docs/src/reference/rntbd.md#golden-frames`, written by the Java SDK's
//! own encoders): the bench writes the same bytes and reads theirs.

use super::*;

/// The golden frames' activity id, `01020304-0506-0708-090a-0b0c0d0e0f10`.
const ACTIVITY: u128 = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10;

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// Hex pieces and quoted text, as the guide lists a frame.
fn listed(pieces: &[&str]) -> Vec<u8> {
    pieces
        .iter()
        .flat_map(|piece| match piece.strip_prefix('"') {
            Some(text) => text.strip_suffix('"').unwrap().as_bytes().to_vec(),
            None => hex(piece),
        })
        .collect()
}

fn cut_whole(bytes: &[u8], rule: PayloadRule) -> ResponseFrame {
    let mut buffer = BytesMut::from(bytes);
    let frame = ResponseFrame::cut(&mut buffer, rule)
        .unwrap()
        .expect("a whole frame");
    assert!(buffer.is_empty(), "the frame is all of it");
    frame
}

#[test]
fn activity_ids_are_written_in_dotnets_layout() {
    assert_eq!(
        guid_bytes(ACTIVITY).to_vec(),
        hex("04030201 0605 0807 090a0b0c0d0e0f10")
    );
}

#[test]
fn the_context_request_is_the_sdks() {
    let agent = format!("azsdk-java-cosmos/4.81.0 Linux/{}", "x".repeat(58 - 31));
    assert_eq!(agent.len(), 58);
    let mut frame = RequestFrame::new(0, 0, guid_bytes(ACTIVITY));
    frame
        .ulong(context::PROTOCOL_VERSION, 1)
        .small_string(context::CLIENT_VERSION, "2020-07-15")
        .small_string(context::USER_AGENT, &agent);
    let bytes = frame.finish(None);
    let mut expected = listed(&[
        "6b000000 0000 0000",
        "0403020106050807090a0b0c0d0e0f10",
        "0000 02 01000000",
        "0100 07 0a",
        "\"2020-07-15\"",
        "0200 07 3a",
    ]);
    expected.extend_from_slice(agent.as_bytes());
    assert_eq!(bytes.len(), 107);
    assert_eq!(bytes, expected);
}

#[test]
fn the_create_document_frame_is_the_sdks() {
    let authorization = format!("type%3Dmaster{}", "x".repeat(38 - 13));
    let mut frame = RequestFrame::new(DOCUMENT, CREATE, guid_bytes(ACTIVITY));
    frame
        .bytes(request::RESOURCE_ID, &hex("d98d2800e43e9f00"))
        .string(request::AUTHORIZATION_TOKEN, &authorization)
        .byte(request::PAYLOAD_PRESENT, 1)
        .small_string(request::DATE, "Tue, 01 Jul 2025 00:00:00 GMT")
        .string(request::SESSION_TOKEN, "0:-1#5")
        .byte(request::CONSISTENCY_LEVEL, 2)
        .string(
            request::REPLICA_PATH,
            "/apps/emu/services/c1/partitions/0/replicas/1p",
        )
        .string(request::DATABASE_NAME, "db1")
        .string(request::COLLECTION_NAME, "c1")
        .small_string(request::CLIENT_VERSION, "2020-07-15")
        .string(request::PARTITION_KEY, r#"["pk1"]"#)
        .ulong(request::TRANSPORT_REQUEST_ID, 1);
    let bytes = frame.finish(Some(br#"{"id":"a","pk":"pk1"}"#));
    let auth = format!("\"{authorization}\"");
    let expected = listed(&[
        "e7000000 0300 0100",
        "0403020106050807090a0b0c0d0e0f10",
        "0000 0b 0800 d98d2800e43e9f00",
        "0100 08 2600",
        &auth,
        "0200 00 01",
        "0300 07 1d",
        "\"Tue, 01 Jul 2025 00:00:00 GMT\"",
        "0500 08 0600",
        "\"0:-1#5\"",
        "1000 00 02",
        "1300 08 2e00",
        "\"/apps/emu/services/c1/partitions/0/replicas/1p\"",
        "1500 08 0300",
        "\"db1\"",
        "1600 08 0200",
        "\"c1\"",
        "2800 07 0a",
        "\"2020-07-15\"",
        "2b00 08 0700",
        "\"[\"pk1\"]\"",
        "4d00 02 01000000",
        "15000000",
        "\"{\"id\":\"a\",\"pk\":\"pk1\"}\"",
    ]);
    assert_eq!(bytes, expected);
    assert_eq!(&bytes[..4], &231u32.to_le_bytes(), "L as the SDK wrote it");
}

#[test]
fn the_context_response_is_read() {
    let bytes = hex("53000000c80000000403020106050807090a0b0c0d0e0f10000002010000000100070a323032302d30372d313502000708526e746264456d7503000708322e31342e302e300400020000000005000200000000");
    let frame = cut_whole(&bytes, PayloadRule::Context);
    assert_eq!(frame.status, 200);
    assert_eq!(frame.activity, guid_bytes(ACTIVITY));
    assert_eq!(frame.ulong(context::PROTOCOL_VERSION), Some(1));
    assert_eq!(frame.text(context::CLIENT_VERSION), Some("2020-07-15"));
    assert_eq!(frame.text(context::SERVER_AGENT), Some("RntbdEmu"));
    assert_eq!(frame.text(context::SERVER_VERSION), Some("2.14.0.0"));
    assert_eq!(frame.payload(), None);
}

/// The guide's 201 Created, its tokens as listed there (each LSN 6).
fn created() -> Vec<u8> {
    let lsn = "0600000000000000";
    listed(&[
        "cf000000 c9000000",
        "0403020106050807090a0b0c0d0e0f10",
        "0000 00 01",
        "0400 08 2600",
        "\"\"00000000-0000-0000-0000-000000000001\"\"",
        "1300 05",
        lsn,
        "1500 0e d7a3703d0ad71640",
        "1700 08 1000",
        "\"dbs/db1/colls/c1\"",
        "1800 08 0c00",
        "\"2Y0oAOQ+nwA=\"",
        "1a00 05",
        lsn,
        "1e00 02 03000000",
        "1f00 02 04000000",
        "2100 08 0100",
        "\"0\"",
        "2900 05",
        lsn,
        "3000 02 00000000",
        "3200 05",
        lsn,
        "3500 02 01000000",
        "3e00 08 0400",
        "\"-1#6\"",
        "0a000000",
        "\"{\"id\":\"a\"}\"",
    ])
}

#[test]
fn the_created_answer_is_read_with_its_payload_and_transport_request_id() {
    let bytes = created();
    assert_eq!(
        &bytes[..4],
        &207u32.to_le_bytes(),
        "L as the guide gives it"
    );
    let frame = cut_whole(&bytes, PayloadRule::Token);
    assert_eq!(frame.status, 201);
    assert_eq!(frame.transport_request_id(), Some(1));
    assert_eq!(frame.text(0x003E), Some("-1#6"));
    assert_eq!(frame.payload(), Some(&br#"{"id":"a"}"#[..]));
}

#[test]
fn the_gone_answer_is_read_without_a_payload() {
    let bytes = hex("3b0000009a0100000403020106050807090a0b0c0d0e0f100000000013000506000000000000001c0002ea03000021000801003035000203000000");
    let frame = cut_whole(&bytes, PayloadRule::Token);
    assert_eq!(frame.status, 410);
    assert_eq!(frame.ulong(response::SUB_STATUS), Some(1002));
    assert_eq!(frame.transport_request_id(), Some(3));
    assert_eq!(frame.payload(), None);
}

#[test]
fn a_frame_is_cut_only_once_whole_and_the_next_one_stays() {
    let one = created();
    let two = [one.clone(), one.clone()].concat();
    for end in 0..one.len() {
        let mut buffer = BytesMut::from(&two[..end]);
        assert!(
            ResponseFrame::cut(&mut buffer, PayloadRule::Token)
                .unwrap()
                .is_none(),
            "{end} bytes are not a whole frame"
        );
        assert_eq!(buffer.len(), end, "nothing is taken from a part");
    }
    let mut buffer = BytesMut::from(&two[..one.len() + 10]);
    assert!(ResponseFrame::cut(&mut buffer, PayloadRule::Token)
        .unwrap()
        .is_some());
    assert_eq!(&buffer[..], &one[..10], "the next frame's start is kept");
}

#[test]
fn bytes_that_are_no_frame_are_refused() {
    let short = 10u32.to_le_bytes().repeat(6);
    let mut bad_type = created();
    // PayloadPresent's type byte, made one no type has.
    bad_type[26] = 0x42;
    let mut past_l = hex("1c000000 c8000000 0403020106050807090a0b0c0d0e0f10 0400 08 ff00");
    past_l.extend_from_slice(&[0; 8]);
    for bytes in [short, bad_type, past_l] {
        let mut buffer = BytesMut::from(&bytes[..]);
        assert!(
            ResponseFrame::cut(&mut buffer, PayloadRule::Token).is_err(),
            "{bytes:02x?}"
        );
    }
}
