//! The dispatcher fuzzed: any resource and operation type, any subset of
//! the request tokens with any values of their declared types, any names
//! and any body, signed as a client signs the link the names make (so that
//! most requests get past authentication into the operations). Whatever
//! comes in, the answer is one whole response frame echoing the request's
//! ActivityId and TransportRequestID, with a status the service uses, and
//! never the 500 of a panic. Seeded and bounded (`FUZZ_CASES`, `FUZZ_SEED`,
//! as the codec's properties; `cargo xtask fuzz` raises them).

use std::sync::{Arc, OnceLock};

use bytes::BytesMut;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use uuid::Uuid;

use super::{account, answer, leak};
use crate::account::Account;
use crate::net::transport::ConnectionControl;
use crate::protocol::auth::{self, MasterKey, WELL_KNOWN_KEY};
use crate::rntbd::codec::{
    OperationType, RequestFrame, RequestToken, RequestTokens, ResourceType, ResponseFrame,
    TokenType, TokenValue,
};
use crate::rntbd::dispatch::names::{self, Names};

fn config() -> Config {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    Config {
        cases: env("FUZZ_CASES").map_or(128, |n| n as u32),
        rng_seed: RngSeed::Fixed(env("FUZZ_SEED").unwrap_or(0x00d1_5ba7)),
        failure_persistence: None,
        ..Config::default()
    }
}

/// One account for every case: what one case writes is input to the next.
fn shared() -> Arc<Account> {
    static ACCOUNT: OnceLock<Arc<Account>> = OnceLock::new();
    ACCOUNT.get_or_init(account).clone()
}

/// A token's value, owned.
#[derive(Clone, Debug)]
enum Value {
    Number(u64),
    Text(String),
    Bytes(Vec<u8>),
}

/// Text a request token may hold: what the SDKs send, and anything.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"["a"]"#.to_string()),
        Just(r#"["b",1]"#.to_string()),
        Just("0".to_string()),
        Just("0:-1#5".to_string()),
        Just("*".to_string()),
        Just("Incremental Feed".to_string()),
        Just(r#"[{"token":"1","range":{"min":"","max":"FF"}}]"#.to_string()),
        "[ -~]{0,24}",
        any::<String>().prop_map(|s| s.chars().take(24).collect()),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop_oneof![Just(0u64), Just(1), Just(2), Just(u64::MAX), any::<u64>()]
            .prop_map(Value::Number),
        text().prop_map(Value::Text),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(Value::Bytes),
    ]
}

/// A name: the seeded ones, or anything.
fn name(seeded: &'static str) -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => Just(Some(seeded.to_string())),
        1 => Just(None),
        1 => "[ -~]{0,12}".prop_map(Some),
    ]
}

fn body() -> impl Strategy<Value = Option<Vec<u8>>> {
    let json = |s: &str| Just(Some(s.as_bytes().to_vec()));
    prop_oneof![
        Just(None),
        json(r#"{"id":"x","pk":"a","v":1}"#),
        json(r#"{"id":"y","pk":"a","ttl":5}"#),
        json(
            r#"{"query":"SELECT * FROM c WHERE c.pk = @p","parameters":[{"name":"@p","value":"a"}]}"#
        ),
        json(r#"[{"operationType":"Create","resourceBody":{"id":"z","pk":"a"}}]"#),
        json(r#"[{"op":"add","path":"/v","value":2}]"#),
        json(r#"{"id":"sp","body":"function () { getContext().getResponse().setBody(1); }"}"#),
        prop::collection::vec(any::<u8>(), 0..64).prop_map(Some),
    ]
}

/// What one case sends, owned.
#[derive(Clone, Debug)]
struct Case {
    resource: u16,
    operation: u16,
    names: [Option<String>; 6],
    tokens: Vec<(usize, Value)>,
    body: Option<Vec<u8>>,
    transport: u32,
}

fn case() -> impl Strategy<Value = Case> {
    // Mostly the pairs the SDKs send (so that the operations run), then
    // any pair of ids at all.
    let served = prop::sample::select(vec![
        (3u16, 1u16),
        (3, 2),
        (3, 3),
        (3, 4),
        (3, 5),
        (3, 6),
        (3, 9),
        (3, 0xF),
        (3, 0x11),
        (3, 0x13),
        (3, 0x25),
        (2, 3),
        (2, 4),
        (2, 0x11),
        (1, 3),
        (1, 4),
        (1, 0x12),
        (7, 8),
        (7, 3),
        (7, 4),
        (5, 3),
        (5, 4),
        (6, 3),
        (6, 4),
        (0x16, 4),
        (0x12, 0x12),
    ]);
    let kinds = prop_oneof![4 => served, 1 => any::<(u16, u16)>()];
    let names = (
        name("db"),
        name("c"),
        name("x"),
        name("sp"),
        name("u"),
        name("p"),
    )
        .prop_map(|(a, b, c, d, e, f)| [a, b, c, d, e, f]);
    let tokens = prop::collection::vec((0..RequestToken::COUNT, value()), 0..8);
    (kinds, names, tokens, body(), any::<u32>()).prop_map(
        |((resource, operation), names, tokens, body, transport)| Case {
            resource,
            operation,
            names,
            tokens,
            body,
            transport,
        },
    )
}

/// `value` as `token`'s declared type, when it can be one.
fn typed(token: RequestToken, value: &Value) -> Option<TokenValue<'static>> {
    let n = match value {
        Value::Number(n) => *n,
        Value::Text(text) => return textual(token.token_type(), leak(text)),
        Value::Bytes(bytes) => {
            let bytes: &'static [u8] = Box::leak(bytes.clone().into_boxed_slice());
            return match token.token_type() {
                TokenType::Bytes => Some(TokenValue::Bytes(bytes)),
                TokenType::SmallBytes => Some(TokenValue::SmallBytes(bytes)),
                TokenType::ULongBytes => Some(TokenValue::ULongBytes(bytes)),
                _ => None,
            };
        }
    };
    Some(match token.token_type() {
        TokenType::Byte => TokenValue::Byte(n as u8),
        TokenType::UShort => TokenValue::UShort(n as u16),
        TokenType::ULong => TokenValue::ULong(n as u32),
        TokenType::Long => TokenValue::Long(n as i32),
        TokenType::ULongLong => TokenValue::ULongLong(n),
        TokenType::LongLong => TokenValue::LongLong(n as i64),
        TokenType::Guid => TokenValue::Guid(Uuid::from_u64_pair(n, !n)),
        _ => return None,
    })
}

fn textual(token_type: TokenType, text: &'static str) -> Option<TokenValue<'static>> {
    match token_type {
        TokenType::SmallString if text.len() <= 255 => Some(TokenValue::SmallString(text)),
        TokenType::String => Some(TokenValue::String(text)),
        TokenType::ULongString => Some(TokenValue::ULongString(text)),
        _ => None,
    }
}

/// The case's frame, signed for the link its names make (or, when they
/// make none, for the account's root).
fn frame(case: &Case) -> BytesMut {
    let mut tokens = RequestTokens::new();
    for (index, value) in &case.tokens {
        let token = RequestToken::ALL[*index];
        if let Some(value) = typed(token, value) {
            let _ = tokens.set(token, value);
        }
    }
    let [database, container, document, sproc, user, permission] = &case.names;
    let leaked = |name: &Option<String>| name.as_deref().map(leak);
    if let Some(name) = leaked(database) {
        tokens.set_database_name(name);
    }
    if let Some(name) = leaked(container) {
        tokens.set_collection_name(name);
    }
    if let Some(name) = leaked(document) {
        tokens.set_document_name(name);
    }
    if let Some(name) = leaked(sproc) {
        tokens.set_stored_procedure_name(name);
    }
    if let Some(name) = leaked(user) {
        tokens.set_user_name(name);
    }
    if let Some(name) = leaked(permission) {
        tokens.set_permission_name(name);
    }
    let mut request = RequestFrame {
        resource_type: ResourceType::from_id(case.resource),
        operation_type: OperationType::from_id(case.operation),
        activity_id: Uuid::from_u128(u128::from(case.transport) << 64 | 0xac),
        tokens,
        payload: case.body.as_deref(),
    };
    let path = names::rest_path(&request, &Names::of(&request)).unwrap_or_default();
    let signed = auth::signed_resource(&path);
    let date = leak(&httpdate::fmt_http_date(std::time::SystemTime::now()));
    let verb = format!("{:?}", names::verb(request.operation_type)).to_ascii_lowercase();
    let key = MasterKey::from_base64(WELL_KNOWN_KEY).unwrap();
    let payload = auth::payload(&verb, &signed.resource_type, &signed.links[0], date, "");
    request
        .tokens
        .set_authorization_token(leak(&auth::authorization_header(&key, &payload)))
        .set_date(date)
        .set_transport_request_id(case.transport);
    let mut out = BytesMut::new();
    request.encode(&mut out).expect("a frame within the limits");
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_request_is_answered_with_one_whole_frame_and_never_a_panic(case in case()) {
        let request = frame(&case).freeze();
        let (activity, transport) = {
            let (frame, _) = RequestFrame::decode(&request).unwrap().unwrap();
            (frame.activity_id, case.transport)
        };
        let bytes = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(answer(shared(), 0, request, ConnectionControl::default()));
        let (response, used) = ResponseFrame::decode(&bytes)
            .expect("the answer decodes")
            .expect("the answer is whole");
        prop_assert_eq!(used, bytes.len(), "one frame, nothing after it");
        prop_assert_eq!(response.activity_id, activity);
        prop_assert_eq!(response.tokens.transport_request_id(), Some(transport));
        prop_assert!(
            (200..600).contains(&response.status) && response.status != 500,
            "status {}: {:?}",
            response.status,
            response.payload.map(String::from_utf8_lossy)
        );
    }
}
