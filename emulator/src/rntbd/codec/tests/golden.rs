//! The golden frames: bytes the Java SDK 4.81.0's own encoder wrote (and
//! its decoder read back), as `docs/src/reference/rntbd.md#golden-frames`
//! gives them. The codec must read them field by field and write the same
//! bytes, byte for byte.

use bytes::BytesMut;

use super::{activity, h, t};
use crate::rntbd::codec::*;

/// The context request's user agent: the golden frame's is 58 bytes of
/// `azsdk-java-cosmos/4.81.0 Linux/… JRE/…`; this one has its shape and
/// length.
const USER_AGENT: &str = "azsdk-java-cosmos/4.81.0 Linux/6.12.10-28-amd64 JRE/21.0.5";

fn context_request_bytes() -> Vec<u8> {
    assert_eq!(USER_AGENT.len(), 0x3a);
    [
        h("6b000000 0000 0000 0403020106050807090a0b0c0d0e0f10"),
        h("0000 02 01000000"),
        h("0100 07 0a"),
        t("2020-07-15"),
        h("0200 07 3a"),
        t(USER_AGENT),
    ]
    .concat()
}

#[test]
fn the_context_request_reads_field_by_field() {
    let bytes = context_request_bytes();
    assert_eq!(bytes.len(), 0x6b);
    let Some((Incoming::Context(request), used)) = decode_incoming(&bytes).unwrap() else {
        panic!("not a context request");
    };
    assert_eq!(used, 0x6b);
    assert_eq!(request.activity_id, activity());
    assert_eq!(request.protocol_version, 1);
    assert_eq!(request.client_version, "2020-07-15");
    assert_eq!(request.user_agent, Some(USER_AGENT));
    let mut out = BytesMut::new();
    request.encode(&mut out).unwrap();
    assert_eq!(out.as_ref(), bytes, "and writes back the same bytes");
}

#[test]
fn the_context_response_is_written_byte_for_byte() {
    let bytes = context_request_bytes();
    let (request, _) = ContextRequest::decode(&bytes).unwrap().unwrap();
    let response = ContextResponse::accept(&request, "RntbdEmu", "2.14.0.0", 0, 0);
    let mut out = BytesMut::new();
    response.encode(&mut out).unwrap();
    let golden = h(
        "53000000c80000000403020106050807090a0b0c0d0e0f10000002010000000100070a\
         323032302d30372d313502000708526e746264456d7503000708322e31342e302e30\
         0400020000000005000200000000",
    );
    assert_eq!(out.as_ref(), golden);
    assert_eq!(
        ContextResponse::decode(&golden).unwrap(),
        Some((response, golden.len()))
    );
}

/// The authorization token's 38 bytes: the facts give only its start
/// (`type%3Dmaster…`); the rest here is of that length.
const AUTHORIZATION: &str = "type%3Dmaster%26ver%3D1.0%26sig%3Dabcd";

fn create_document_bytes() -> Vec<u8> {
    assert_eq!(AUTHORIZATION.len(), 0x26);
    [
        h("e7000000 0300 0100 0403020106050807090a0b0c0d0e0f10"),
        h("0000 0b 0800 d98d2800e43e9f00"),
        h("0100 08 2600"),
        t(AUTHORIZATION),
        h("0200 00 01"),
        h("0300 07 1d"),
        t("Tue, 01 Jul 2025 00:00:00 GMT"),
        h("0500 08 0600"),
        t("0:-1#5"),
        h("1000 00 02"),
        h("1300 08 2e00"),
        t("/apps/emu/services/c1/partitions/0/replicas/1p"),
        h("1500 08 0300"),
        t("db1"),
        h("1600 08 0200"),
        t("c1"),
        h("2800 07 0a"),
        t("2020-07-15"),
        h("2b00 08 0700"),
        t(r#"["pk1"]"#),
        h("4d00 02 01000000"),
        h("15000000"),
        t(r#"{"id":"a","pk":"pk1"}"#),
    ]
    .concat()
}

#[test]
fn the_create_document_request_reads_field_by_field() {
    let bytes = create_document_bytes();
    assert_eq!(bytes.len(), 231 + 4 + 0x15, "L counts the tokens as listed");
    let Some((Incoming::Request(request), used)) = decode_incoming(&bytes).unwrap() else {
        panic!("not a data request");
    };
    assert_eq!(used, bytes.len());
    assert_eq!(request.resource_type, ResourceType::Document);
    assert_eq!(request.operation_type, OperationType::Create);
    assert_eq!(request.activity_id, activity());
    let tokens = &request.tokens;
    assert_eq!(tokens.resource_id(), Some(&h("d98d2800e43e9f00")[..]));
    assert_eq!(tokens.authorization_token(), Some(AUTHORIZATION));
    assert_eq!(tokens.date(), Some("Tue, 01 Jul 2025 00:00:00 GMT"));
    assert_eq!(tokens.session_token(), Some("0:-1#5"));
    assert_eq!(tokens.consistency_level(), Some(2));
    assert_eq!(
        tokens.replica_path(),
        Some("/apps/emu/services/c1/partitions/0/replicas/1p")
    );
    assert_eq!(tokens.database_name(), Some("db1"));
    assert_eq!(tokens.collection_name(), Some("c1"));
    assert_eq!(tokens.client_version(), Some("2020-07-15"));
    assert_eq!(tokens.partition_key(), Some(r#"["pk1"]"#));
    assert_eq!(tokens.transport_request_id(), Some(1));
    assert_eq!(tokens.iter().count(), 11, "and nothing else");
    assert_eq!(request.payload, Some(&br#"{"id":"a","pk":"pk1"}"#[..]));
    let mut out = BytesMut::new();
    request.encode(&mut out).unwrap();
    assert_eq!(out.as_ref(), bytes, "written back in the SDK's order");
}

fn created_response_bytes() -> Vec<u8> {
    let lsn_6 = "0600000000000000";
    [
        h("cf000000 c9000000 0403020106050807090a0b0c0d0e0f10"),
        h("0000 00 01"),
        h("0400 08 2600"),
        t(r#""00000000-0000-0000-0000-000000000001""#),
        h(&format!("1300 05 {lsn_6}")),
        h("1500 0e d7a3703d0ad71640"),
        h("1700 08 1000"),
        t("dbs/db1/colls/c1"),
        h("1800 08 0c00"),
        t("2Y0oAOQ+nwA="),
        h(&format!("1a00 05 {lsn_6}")),
        h("1e00 02 03000000"),
        h("1f00 02 04000000"),
        h("2100 08 0100"),
        t("0"),
        h(&format!("2900 05 {lsn_6}")),
        h("3000 02 00000000"),
        h(&format!("3200 05 {lsn_6}")),
        h("3500 02 01000000"),
        h("3e00 08 0400"),
        t("-1#6"),
        h("0a000000"),
        t(r#"{"id":"a"}"#),
    ]
    .concat()
}

#[test]
fn the_created_response_is_written_byte_for_byte() {
    let golden = created_response_bytes();
    assert_eq!(golden.len(), 0xcf + 4 + 10, "L counts the tokens as listed");
    let mut tokens = ResponseTokens::new();
    tokens
        .set_transport_request_id(1)
        .set_etag(r#""00000000-0000-0000-0000-000000000001""#)
        .set_lsn(6)
        .set_global_committed_lsn(6)
        .set_quorum_acked_lsn(6)
        .set_item_lsn(6)
        .set_request_charge(5.71)
        .set_owner_full_name("dbs/db1/colls/c1")
        .set_owner_id("2Y0oAOQ+nwA=")
        .set_current_write_quorum(3)
        .set_current_replica_set_size(4)
        .set_partition_key_range_id("0")
        .set_number_of_read_regions(0)
        .set_session_token("-1#6");
    let response = ResponseFrame {
        status: 201,
        activity_id: activity(),
        tokens,
        payload: Some(br#"{"id":"a"}"#),
    };
    let mut out = BytesMut::new();
    response.encode(&mut out).unwrap();
    assert_eq!(out.as_ref(), golden);
    assert_eq!(
        ResponseFrame::decode(&golden).unwrap(),
        Some((response, golden.len()))
    );
}

#[test]
fn the_gone_response_without_a_body_is_written_byte_for_byte() {
    let golden = h(
        "3b0000009a0100000403020106050807090a0b0c0d0e0f10000000001300050600000000\
         0000001c0002ea03000021000801003035000203000000",
    );
    let mut tokens = ResponseTokens::new();
    tokens
        .set_lsn(6)
        .set_sub_status(1002)
        .set_partition_key_range_id("0")
        .set_transport_request_id(3);
    let response = ResponseFrame {
        status: 410,
        activity_id: activity(),
        tokens,
        payload: None,
    };
    let mut out = BytesMut::new();
    response.encode(&mut out).unwrap();
    assert_eq!(out.as_ref(), golden);
    assert_eq!(
        ResponseFrame::decode(&golden).unwrap(),
        Some((response, golden.len()))
    );
}
