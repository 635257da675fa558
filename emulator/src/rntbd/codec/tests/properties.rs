//! Properties over generated frames and random bytes: every token type
//! and every frame round-trips (written, then read, gives the same value
//! and the same bytes); a frame cut anywhere asks for more bytes; a frame
//! followed by garbage is read whole, the garbage then refused or waited
//! on; and no bytes at all (random, or a valid frame with bytes changed)
//! make a decoder panic or claim more bytes than it was given. Seeded and
//! bounded (`FUZZ_CASES`, `FUZZ_SEED` raise and change them, as for
//! `tests/it/fuzz.rs`).

use bytes::BytesMut;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed};
use uuid::Uuid;

use crate::rntbd::codec::*;

fn config() -> Config {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    Config {
        cases: env("FUZZ_CASES").map_or(256, |n| n as u32),
        rng_seed: RngSeed::Fixed(env("FUZZ_SEED").unwrap_or(0x0bad_f00d)),
        failure_persistence: None,
        ..Config::default()
    }
}

/// A token value that owns its text and bytes, for strategies to make.
#[derive(Clone, Debug)]
enum Owned {
    Byte(u8),
    UShort(u16),
    ULong(u32),
    Long(i32),
    ULongLong(u64),
    LongLong(i64),
    Guid(u128),
    SmallString(String),
    String(String),
    ULongString(String),
    SmallBytes(Vec<u8>),
    Bytes(Vec<u8>),
    ULongBytes(Vec<u8>),
    Float(f32),
    Double(f64),
    Invalid,
}

impl Owned {
    fn value(&self) -> TokenValue<'_> {
        match self {
            Owned::Byte(v) => TokenValue::Byte(*v),
            Owned::UShort(v) => TokenValue::UShort(*v),
            Owned::ULong(v) => TokenValue::ULong(*v),
            Owned::Long(v) => TokenValue::Long(*v),
            Owned::ULongLong(v) => TokenValue::ULongLong(*v),
            Owned::LongLong(v) => TokenValue::LongLong(*v),
            Owned::Guid(v) => TokenValue::Guid(Uuid::from_u128(*v)),
            Owned::SmallString(v) => TokenValue::SmallString(v),
            Owned::String(v) => TokenValue::String(v),
            Owned::ULongString(v) => TokenValue::ULongString(v),
            Owned::SmallBytes(v) => TokenValue::SmallBytes(v),
            Owned::Bytes(v) => TokenValue::Bytes(v),
            Owned::ULongBytes(v) => TokenValue::ULongBytes(v),
            Owned::Float(v) => TokenValue::Float(*v),
            Owned::Double(v) => TokenValue::Double(*v),
            Owned::Invalid => TokenValue::Invalid,
        }
    }
}

/// Any value of `token_type` (floats but NaN, which equals nothing; text
/// of at most 60 characters, so that a SmallString's 255 bytes hold it).
fn owned(token_type: TokenType) -> BoxedStrategy<Owned> {
    let text = || "\\PC{0,60}";
    let bytes = || prop::collection::vec(any::<u8>(), 0..80);
    match token_type {
        TokenType::Byte => any::<u8>().prop_map(Owned::Byte).boxed(),
        TokenType::UShort => any::<u16>().prop_map(Owned::UShort).boxed(),
        TokenType::ULong => any::<u32>().prop_map(Owned::ULong).boxed(),
        TokenType::Long => any::<i32>().prop_map(Owned::Long).boxed(),
        TokenType::ULongLong => any::<u64>().prop_map(Owned::ULongLong).boxed(),
        TokenType::LongLong => any::<i64>().prop_map(Owned::LongLong).boxed(),
        TokenType::Guid => any::<u128>().prop_map(Owned::Guid).boxed(),
        TokenType::SmallString => text().prop_map(Owned::SmallString).boxed(),
        TokenType::String => text().prop_map(Owned::String).boxed(),
        TokenType::ULongString => text().prop_map(Owned::ULongString).boxed(),
        TokenType::SmallBytes => bytes().prop_map(Owned::SmallBytes).boxed(),
        TokenType::Bytes => bytes().prop_map(Owned::Bytes).boxed(),
        TokenType::ULongBytes => bytes().prop_map(Owned::ULongBytes).boxed(),
        TokenType::Float => any::<f32>()
            .prop_filter("NaN", |f| !f.is_nan())
            .prop_map(Owned::Float)
            .boxed(),
        TokenType::Double => any::<f64>()
            .prop_filter("NaN", |f| !f.is_nan())
            .prop_map(Owned::Double)
            .boxed(),
        TokenType::Invalid => Just(Owned::Invalid).boxed(),
    }
}

fn any_value() -> impl Strategy<Value = Owned> {
    prop::sample::select(TokenType::ALL.to_vec()).prop_flat_map(owned)
}

fn payload() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop::collection::vec(any::<u8>(), 0..200))
}

/// What a request frame is made of, owned.
#[derive(Clone, Debug)]
struct RequestParts {
    resource: u16,
    operation: u16,
    activity: u128,
    tokens: Vec<(RequestToken, Owned)>,
    payload: Option<Vec<u8>>,
}

impl RequestParts {
    fn frame(&self) -> RequestFrame<'_> {
        let mut tokens = RequestTokens::new();
        for (token, value) in &self.tokens {
            tokens
                .set(*token, value.value())
                .expect("of the declared type");
        }
        RequestFrame {
            resource_type: ResourceType::from_id(self.resource),
            operation_type: OperationType::from_id(self.operation),
            activity_id: Uuid::from_u128(self.activity),
            tokens,
            payload: self.payload.as_deref(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = BytesMut::new();
        self.frame().encode(&mut out).unwrap();
        out.to_vec()
    }
}

fn request_parts() -> impl Strategy<Value = RequestParts> {
    let token = prop::sample::select(RequestToken::ALL)
        .prop_flat_map(|t| owned(t.token_type()).prop_map(move |v| (t, v)));
    (
        1..=u16::MAX, // resource 0 with operation 0 would be a context request
        any::<u16>(),
        any::<u128>(),
        prop::collection::vec(token, 0..12),
        payload(),
    )
        .prop_map(
            |(resource, operation, activity, tokens, payload)| RequestParts {
                resource,
                operation,
                activity,
                tokens,
                payload,
            },
        )
}

/// What a response frame is made of, owned.
#[derive(Clone, Debug)]
struct ResponseParts {
    status: u32,
    activity: u128,
    tokens: Vec<(ResponseToken, Owned)>,
    payload: Option<Vec<u8>>,
}

impl ResponseParts {
    fn frame(&self) -> ResponseFrame<'_> {
        let mut tokens = ResponseTokens::new();
        for (token, value) in &self.tokens {
            tokens
                .set(*token, value.value())
                .expect("of the declared type");
        }
        ResponseFrame {
            status: self.status,
            activity_id: Uuid::from_u128(self.activity),
            tokens,
            payload: self.payload.as_deref(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = BytesMut::new();
        self.frame().encode(&mut out).unwrap();
        out.to_vec()
    }
}

fn response_parts() -> impl Strategy<Value = ResponseParts> {
    let token = prop::sample::select(ResponseToken::ALL)
        .prop_flat_map(|t| owned(t.token_type()).prop_map(move |v| (t, v)));
    (
        any::<u32>(),
        any::<u128>(),
        prop::collection::vec(token, 0..12),
        payload(),
    )
        .prop_map(|(status, activity, tokens, payload)| ResponseParts {
            status,
            activity,
            tokens,
            payload,
        })
}

/// Every decoder over `bytes`: none panics, none claims more than it got.
fn decode_all(bytes: &[u8]) {
    fn within<T, E>(read: Result<Option<(T, usize)>, E>, len: usize) {
        if let Ok(Some((_, used))) = read {
            assert!(used <= len, "claimed {used} of {len} bytes");
            assert!(used >= HEADER_BYTES, "a frame is at least its header");
        }
    }
    within(decode_incoming(bytes), bytes.len());
    within(RequestFrame::decode(bytes), bytes.len());
    within(ResponseFrame::decode(bytes), bytes.len());
    within(ContextRequest::decode(bytes), bytes.len());
    within(ContextResponse::decode(bytes), bytes.len());
}

/// Bytes whose length field is a plausible frame's, around random tokens:
/// what gets past the length check into the token reader.
fn framed_garbage() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(any::<u8>(), 0..4),
        prop::collection::vec(any::<u8>(), 0..160),
        prop::collection::vec(any::<u8>(), 0..40),
    )
        .prop_map(|(kinds, tokens, after)| {
            let length = (HEADER_BYTES + tokens.len()) as u32;
            let mut word = [0; 20];
            word[..kinds.len()].copy_from_slice(&kinds);
            [&length.to_le_bytes()[..], &word, &tokens, &after].concat()
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_token_type_round_trips(id in any::<u16>(), value in any_value(), tail in prop::collection::vec(any::<u8>(), 0..8)) {
        let mut out = BytesMut::new();
        let value = value.value();
        write_token(&mut out, TokenName { id, name: None }, &value).unwrap();
        let written = out.len();
        out.extend_from_slice(&tail);
        let (token, used) = read_token(&out, 0, |_| None).unwrap();
        prop_assert_eq!(used, written);
        prop_assert_eq!((token.id(), token.token_type()), (id, value.token_type()));
        prop_assert_eq!(token.value(), Ok(value));
    }

    #[test]
    fn request_frames_round_trip(parts in request_parts()) {
        let bytes = parts.bytes();
        let (read, used) = RequestFrame::decode(&bytes).unwrap().unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(&read, &parts.frame());
        let mut again = BytesMut::new();
        read.encode(&mut again).unwrap();
        prop_assert_eq!(again.as_ref(), &bytes[..]);
        let Some((Incoming::Request(incoming), _)) = decode_incoming(&bytes).unwrap() else {
            panic!("a data request");
        };
        prop_assert_eq!(*incoming, read);
    }

    #[test]
    fn response_frames_round_trip(parts in response_parts()) {
        let bytes = parts.bytes();
        let (read, used) = ResponseFrame::decode(&bytes).unwrap().unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(&read, &parts.frame());
        let mut again = BytesMut::new();
        read.encode(&mut again).unwrap();
        prop_assert_eq!(again.as_ref(), &bytes[..]);
    }

    #[test]
    fn the_context_exchange_round_trips(
        activity in any::<u128>(),
        version in "\\PC{0,30}",
        agent in prop::option::of("\\PC{0,60}"),
        status in prop::sample::select(vec![200u32, 201, 399, 400, 404, 500]),
        timeouts in any::<(u32, u32)>(),
    ) {
        let request = ContextRequest {
            activity_id: Uuid::from_u128(activity),
            protocol_version: 1,
            client_version: &version,
            user_agent: agent.as_deref(),
        };
        let mut out = BytesMut::new();
        request.encode(&mut out).unwrap();
        prop_assert_eq!(decode_incoming(&out).unwrap(), Some((Incoming::Context(request), out.len())));
        let response = ContextResponse {
            status,
            error_body: (status >= 400).then_some(&br#"{"code":"BadRequest","message":"no"}"#[..]),
            ..ContextResponse::accept(&request, "emulator", &version, timeouts.0, timeouts.1)
        };
        let mut out = BytesMut::new();
        response.encode(&mut out).unwrap();
        prop_assert_eq!(ContextResponse::decode(&out).unwrap(), Some((response, out.len())));
    }

    #[test]
    fn a_frame_cut_anywhere_asks_for_more(request in request_parts(), response in response_parts()) {
        let request = request.bytes();
        for cut in 0..request.len() {
            prop_assert_eq!(RequestFrame::decode(&request[..cut]), Ok(None), "cut at {}", cut);
            prop_assert_eq!(decode_incoming(&request[..cut]), Ok(None), "cut at {}", cut);
        }
        let response = response.bytes();
        for cut in 0..response.len() {
            prop_assert_eq!(ResponseFrame::decode(&response[..cut]), Ok(None), "cut at {}", cut);
        }
    }

    #[test]
    fn a_frame_then_garbage_reads_the_frame_then_refuses_or_waits(
        parts in request_parts(),
        garbage in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let frame = parts.bytes();
        let bytes = [&frame[..], &garbage].concat();
        let (read, used) = RequestFrame::decode(&bytes).unwrap().unwrap();
        prop_assert_eq!((read, used), (parts.frame(), frame.len()));
        let Some((Incoming::Request(_), used)) = decode_incoming(&bytes).unwrap() else {
            panic!("a data request");
        };
        prop_assert_eq!(used, frame.len());
        let rest = decode_incoming(&bytes[used..]);
        prop_assert!(matches!(rest, Err(_) | Ok(None)), "{:?}", rest);
    }

    #[test]
    fn random_bytes_never_panic_nor_overclaim(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        decode_all(&bytes);
    }

    #[test]
    fn random_tokens_in_a_plausible_frame_never_panic_nor_overclaim(bytes in framed_garbage()) {
        decode_all(&bytes);
    }

    #[test]
    fn a_valid_frame_with_bytes_changed_never_panics_nor_overclaims(
        request in request_parts(),
        response in response_parts(),
        changes in prop::collection::vec((any::<Index>(), any::<u8>()), 1..6),
    ) {
        for mut bytes in [request.bytes(), response.bytes()] {
            for (at, byte) in &changes {
                let at = at.index(bytes.len());
                bytes[at] = *byte;
            }
            decode_all(&bytes);
        }
    }
}
