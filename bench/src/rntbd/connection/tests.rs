//! A connection against a scripted server over an in-memory stream: the
//! context exchange, answers in another order than the requests, an
//! answer naming no request, and the server going away.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

use super::*;
use crate::rntbd::frame::{request, tokens_of, RequestFrame};

/// A response frame: L, the status, the activity id, tokens, payload. (A
/// request frame's header with the status's two halves as its resource
/// and operation types writes the same bytes.)
fn answer(status: u32, activity: [u8; 16], id: Option<u32>, body: &[u8]) -> Vec<u8> {
    let mut frame = RequestFrame::new(status as u16, (status >> 16) as u16, activity);
    frame.byte(0x0000, 1);
    if let Some(id) = id {
        frame.ulong(0x0035, id);
    }
    frame.finish(Some(body))
}

/// Reads one request frame (without a payload) from the client.
async fn read_frame(server: &mut DuplexStream) -> Vec<u8> {
    let mut length = [0; 4];
    server.read_exact(&mut length).await.unwrap();
    let mut frame = length.to_vec();
    frame.resize(u32::from_le_bytes(length) as usize, 0);
    server.read_exact(&mut frame[4..]).await.unwrap();
    frame
}

fn activity(frame: &[u8]) -> [u8; 16] {
    frame[8..24].try_into().unwrap()
}

fn transport_request_id(frame: &[u8]) -> u32 {
    let tokens = tokens_of(frame).unwrap();
    let (_, _, value) = tokens
        .iter()
        .find(|(id, _, _)| *id == request::TRANSPORT_REQUEST_ID)
        .unwrap();
    u32::from_le_bytes((*value).try_into().unwrap())
}

/// A client past the context exchange, and the server's end.
async fn negotiated() -> (DirectConnection, DuplexStream) {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    let negotiating = tokio::spawn(DirectConnection::negotiate(client));
    let context = read_frame(&mut server).await;
    assert_eq!(&context[4..8], &[0; 4], "the context request comes first");
    let mut reply = RequestFrame::new(200, 0, activity(&context));
    reply
        .small_string(0x0002, "scripted")
        .small_string(0x0003, "1");
    server.write_all(&reply.finish(None)).await.unwrap();
    (negotiating.await.unwrap().unwrap(), server)
}

fn request(id: u32) -> Vec<u8> {
    let mut frame = RequestFrame::new(3, 3, [id as u8; 16]);
    frame
        .byte(request::PAYLOAD_PRESENT, 0)
        .ulong(request::TRANSPORT_REQUEST_ID, id);
    frame.finish(None)
}

#[tokio::test]
async fn answers_in_another_order_reach_their_own_requests() {
    let (connection, mut server) = negotiated().await;
    let connection = Arc::new(connection);
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let connection = connection.clone();
            tokio::spawn(async move {
                let mut sent = 0;
                let answer = connection
                    .call(|id| {
                        sent = id;
                        request(id)
                    })
                    .await
                    .unwrap();
                (sent, answer)
            })
        })
        .collect();
    let mut received = Vec::new();
    for _ in 0..20 {
        received.push(read_frame(&mut server).await);
    }
    // Backwards, and one answer no request waits for in between.
    server
        .write_all(&answer(200, [0; 16], Some(999), b"{}"))
        .await
        .unwrap();
    for frame in received.iter().rev() {
        let id = transport_request_id(frame);
        let body = format!("{{\"id\":{id}}}");
        server
            .write_all(&answer(200, activity(frame), Some(id), body.as_bytes()))
            .await
            .unwrap();
    }
    for call in calls {
        let (sent, answer) = call.await.unwrap();
        assert_eq!(answer.transport_request_id(), Some(sent));
        assert_eq!(
            answer.payload().unwrap(),
            format!("{{\"id\":{sent}}}").as_bytes()
        );
        assert_eq!(answer.activity, [sent as u8; 16]);
    }
    assert_eq!(connection.unmatched(), 1);
}

#[tokio::test]
async fn requests_waiting_when_the_server_closes_get_an_error() {
    let (connection, mut server) = negotiated().await;
    let connection = Arc::new(connection);
    let waiting = {
        let connection = connection.clone();
        tokio::spawn(async move { connection.call(request).await })
    };
    read_frame(&mut server).await;
    drop(server);
    let result = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the wait ends")
        .unwrap();
    assert!(result.is_err(), "{result:?}");
    // And a request sent afterwards is refused at once.
    assert!(connection.call(request).await.is_err());
}

#[tokio::test]
async fn a_refused_context_is_an_error() {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    let negotiating = tokio::spawn(DirectConnection::negotiate(client));
    let context = read_frame(&mut server).await;
    let mut reply = RequestFrame::new(401, 0, activity(&context));
    reply.small_string(0x0002, "x").small_string(0x0003, "1");
    let error = br#"{"code":"Unauthorized"}"#;
    server.write_all(&reply.finish(Some(error))).await.unwrap();
    let refused = negotiating.await.unwrap();
    assert!(matches!(&refused, Err(e) if e.contains("401") && e.contains("Unauthorized")));
}
