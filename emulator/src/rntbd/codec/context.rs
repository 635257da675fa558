//! The context exchange, a connection's first frames: the client's context
//! request (a request frame with resource and operation types 0 and its
//! own token ids: ProtocolVersion, ClientVersion, UserAgent; the Java SDK
//! 4.81.0's `RntbdContextRequest`, `RntbdConstants.RntbdContextRequestHeader`)
//! and the server's context response (a response frame with no
//! PayloadPresent token; `RntbdContext`, `RntbdConstants.RntbdContextHeader`).
//! The client holds every other request until the response arrives. See
//! `docs/src/reference/rntbd.md#the-context-exchange`.

use bytes::BytesMut;
use uuid::Uuid;

use super::error::{EncodeError, FrameError};
use super::table::token_table;
use super::wire::{each_token, metadata, payload, write_frame, MAX_RESPONSE_PAYLOAD_BYTES};

/// The protocol version the SDKs speak and the emulator answers.
pub const PROTOCOL_VERSION: u32 = 1;

token_table! {
    /// A context request's token.
    pub enum ContextRequestToken;
    /// A context request's tokens.
    pub struct ContextRequestTokens;

    ProtocolVersion = 0x0000, ULong, protocol_version, set_protocol_version;
    /// The REST version the client speaks (`2020-07-15`).
    ClientVersion = 0x0001, SmallString, client_version, set_client_version;
    UserAgent = 0x0002, SmallString, user_agent, set_user_agent;
}

token_table! {
    /// A context response's token.
    pub enum ContextToken;
    /// A context response's tokens.
    pub struct ContextTokens;

    ProtocolVersion = 0x0000, ULong, protocol_version, set_protocol_version;
    /// The request's, echoed.
    ClientVersion = 0x0001, SmallString, client_version, set_client_version;
    /// Required by the client.
    ServerAgent = 0x0002, SmallString, server_agent, set_server_agent;
    /// Required by the client, which shows it as `x-ms-serviceversion`.
    ServerVersion = 0x0003, SmallString, server_version, set_server_version;
    IdleTimeoutInSeconds = 0x0004, ULong, idle_timeout_in_seconds, set_idle_timeout_in_seconds;
    UnauthenticatedTimeoutInSeconds = 0x0005, ULong, unauthenticated_timeout_in_seconds, set_unauthenticated_timeout_in_seconds;
}

/// A client's context request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextRequest<'a> {
    pub activity_id: Uuid,
    pub protocol_version: u32,
    pub client_version: &'a str,
    /// The SDK and platform (`azsdk-java-cosmos/4.81.0 Linux/...`); the
    /// Java SDK always sends it, but the emulator needs it only for logs.
    pub user_agent: Option<&'a str>,
}

impl<'a> ContextRequest<'a> {
    /// Decodes the context request at the start of `buf`; ids other than
    /// its three are skipped (.NET adds some). ProtocolVersion and
    /// ClientVersion are required: the answer echoes them.
    pub fn decode(buf: &'a [u8]) -> Result<Option<(ContextRequest<'a>, usize)>, FrameError> {
        let Some(frame) = metadata(buf)? else {
            return Ok(None);
        };
        let mut tokens = ContextRequestTokens::new();
        each_token(frame.tokens, ContextRequestToken::name_of, |token| {
            tokens.keep(token)
        })?;
        let missing = |token: ContextRequestToken| FrameError::MissingToken {
            token: token.token_name(),
        };
        let request = ContextRequest {
            activity_id: frame.activity_id,
            protocol_version: tokens
                .protocol_version()
                .ok_or(missing(ContextRequestToken::ProtocolVersion))?,
            client_version: tokens
                .client_version()
                .ok_or(missing(ContextRequestToken::ClientVersion))?,
            user_agent: tokens.user_agent(),
        };
        Ok(Some((request, frame.length)))
    }

    /// Appends the request to `out` (the client's side: tests and the bench).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        let mut tokens = ContextRequestTokens::new();
        tokens
            .set_protocol_version(self.protocol_version)
            .set_client_version(self.client_version);
        if let Some(user_agent) = self.user_agent {
            tokens.set_user_agent(user_agent);
        }
        write_frame(
            out,
            [0; 4],
            self.activity_id,
            |out| tokens.write(out, None),
            None,
        )
    }
}

/// The server's context response: every token the client reads, always.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextResponse<'a> {
    /// The request's, echoed.
    pub activity_id: Uuid,
    /// 200 to accept; the client fails the connection on any status
    /// outside 200-399, reading `error_body` after the tokens.
    pub status: u32,
    pub protocol_version: u32,
    pub client_version: &'a str,
    pub server_agent: &'a str,
    pub server_version: &'a str,
    pub idle_timeout_seconds: u32,
    pub unauthenticated_timeout_seconds: u32,
    /// A refusal's JSON body (`{"code", "message"}`), written only with a
    /// status outside 200-399 (`{}` when `None`).
    pub error_body: Option<&'a [u8]>,
}

impl<'a> ContextResponse<'a> {
    /// Accepts `request`: status 200, protocol version 1, its client
    /// version echoed.
    pub fn accept(
        request: &ContextRequest<'a>,
        server_agent: &'a str,
        server_version: &'a str,
        idle_timeout_seconds: u32,
        unauthenticated_timeout_seconds: u32,
    ) -> ContextResponse<'a> {
        ContextResponse {
            activity_id: request.activity_id,
            status: 200,
            protocol_version: PROTOCOL_VERSION,
            client_version: request.client_version,
            server_agent,
            server_version,
            idle_timeout_seconds,
            unauthenticated_timeout_seconds,
            error_body: None,
        }
    }

    /// Whether the client takes the connection (200-399).
    pub fn accepted(&self) -> bool {
        (200..400).contains(&self.status)
    }

    /// Appends the response to `out` (left as it was on an error).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        let mut tokens = ContextTokens::new();
        tokens
            .set_protocol_version(self.protocol_version)
            .set_client_version(self.client_version)
            .set_server_agent(self.server_agent)
            .set_server_version(self.server_version)
            .set_idle_timeout_in_seconds(self.idle_timeout_seconds)
            .set_unauthenticated_timeout_in_seconds(self.unauthenticated_timeout_seconds);
        let body = (!self.accepted()).then(|| self.error_body.unwrap_or(b"{}"));
        write_frame(
            out,
            self.status.to_le_bytes(),
            self.activity_id,
            |out| tokens.write(out, None),
            body,
        )
    }

    /// Decodes the context response at the start of `buf` (the client's
    /// side), as `RntbdContext.decode` reads it: ServerAgent and
    /// ServerVersion required, the others 0 or empty when absent, a body
    /// after the tokens for a status outside 200-399.
    pub fn decode(buf: &'a [u8]) -> Result<Option<(ContextResponse<'a>, usize)>, FrameError> {
        let Some(frame) = metadata(buf)? else {
            return Ok(None);
        };
        let mut tokens = ContextTokens::new();
        each_token(frame.tokens, ContextToken::name_of, |token| {
            tokens.keep(token)
        })?;
        let missing = |token: ContextToken| FrameError::MissingToken {
            token: token.token_name(),
        };
        let mut response = ContextResponse {
            activity_id: frame.activity_id,
            status: u32::from_le_bytes(frame.word),
            protocol_version: tokens.protocol_version().unwrap_or(0),
            client_version: tokens.client_version().unwrap_or(""),
            server_agent: tokens
                .server_agent()
                .ok_or(missing(ContextToken::ServerAgent))?,
            server_version: tokens
                .server_version()
                .ok_or(missing(ContextToken::ServerVersion))?,
            idle_timeout_seconds: tokens.idle_timeout_in_seconds().unwrap_or(0),
            unauthenticated_timeout_seconds: tokens
                .unauthenticated_timeout_in_seconds()
                .unwrap_or(0),
            error_body: None,
        };
        if response.accepted() {
            return Ok(Some((response, frame.length)));
        }
        match payload(buf, frame.length, MAX_RESPONSE_PAYLOAD_BYTES)? {
            Some((body, end)) => {
                response.error_body = Some(body);
                Ok(Some((response, end)))
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_the_sdks_in_ascending_order() {
        use crate::rntbd::codec::token_type::TokenType::{SmallString, ULong};
        let request: Vec<_> = ContextRequestToken::ALL
            .iter()
            .map(|t| (t.id(), t.token_type()))
            .collect();
        assert_eq!(request, [(0, ULong), (1, SmallString), (2, SmallString)]);
        let response: Vec<_> = ContextToken::ALL
            .iter()
            .map(|t| (t.id(), t.token_type()))
            .collect();
        assert_eq!(
            response,
            [
                (0, ULong),
                (1, SmallString),
                (2, SmallString),
                (3, SmallString),
                (4, ULong),
                (5, ULong)
            ]
        );
    }

    #[test]
    fn a_refusal_carries_its_body_after_the_tokens_and_reads_back() {
        let request = ContextRequest {
            activity_id: Uuid::from_u128(7),
            protocol_version: 2,
            client_version: "2020-07-15",
            user_agent: None,
        };
        let refusal = ContextResponse {
            status: 400,
            error_body: Some(br#"{"code":"BadRequest","message":"protocol version 1 only"}"#),
            ..ContextResponse::accept(&request, "emulator", "2.14.0.0", 0, 0)
        };
        let mut out = BytesMut::new();
        refusal.encode(&mut out).unwrap();
        let (read, used) = ContextResponse::decode(&out).unwrap().unwrap();
        assert_eq!((read, used), (refusal, out.len()));
        assert!(!read.accepted());
        for cut in 0..out.len() {
            assert_eq!(
                ContextResponse::decode(&out[..cut]),
                Ok(None),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_context_request_without_its_client_version_is_refused() {
        let mut out = BytesMut::new();
        let mut tokens = ContextRequestTokens::new();
        tokens.set_protocol_version(1);
        write_frame(
            &mut out,
            [0; 4],
            Uuid::nil(),
            |out| tokens.write(out, None),
            None,
        )
        .unwrap();
        let error = ContextRequest::decode(&out).unwrap_err();
        assert_eq!(
            error.to_string(),
            "token ClientVersion (0x0001) is required and absent"
        );
    }
}
