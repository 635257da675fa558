//! The Direct-mode requests the bench sends, as the Java SDK writes them
//! for a name-based point operation (`docs/src/reference/rntbd.md`, the
//! request tokens and the signature): the container's ResourceId and
//! replica path, the names, the partition key, the TransportRequestID, and
//! an AuthorizationToken signed afresh on every request exactly as over
//! HTTP (verb, resource type, link, the Date token as `x-ms-date`), through
//! the same `cosmos_emulator::protocol::auth` helpers the HTTP rows use.

use std::time::SystemTime;

use base64::Engine as _;
use cosmos_emulator::protocol::auth::{self, MasterKey};

use crate::rntbd::frame::{self, context, request, RequestFrame};

/// What the context request says the client is.
pub const CLIENT_VERSION: &str = "2020-07-15";
pub const USER_AGENT: &str = "cosmos-bench (RNTBD, docs/src/reference/rntbd.md)";

/// The first frame of every connection.
pub fn context_request(activity: [u8; 16]) -> Vec<u8> {
    let mut frame = RequestFrame::new(0, 0, activity);
    frame
        .ulong(context::PROTOCOL_VERSION, 1)
        .small_string(context::CLIENT_VERSION, CLIENT_VERSION)
        .small_string(context::USER_AGENT, USER_AGENT);
    frame.finish(None)
}

/// Builds signed Document requests for one container.
#[derive(Clone)]
pub struct DirectSigner {
    key: MasterKey,
    database: String,
    container: String,
    /// The container's RID as bytes (ResourceId, 0x0000).
    resource_id: Vec<u8>,
    /// Its range 0's primary replica's path (ReplicaPath, 0x0013).
    replica_path: String,
}

impl DirectSigner {
    /// `container_rid` is the container's `_rid` (base64).
    pub fn new(
        key: &str,
        database: &str,
        container: &str,
        container_rid: &str,
    ) -> Result<DirectSigner, String> {
        let resource_id = base64::engine::general_purpose::STANDARD
            .decode(container_rid)
            .map_err(|e| format!("the container's _rid {container_rid:?}: {e}"))?;
        Ok(DirectSigner {
            key: MasterKey::from_base64(key)?,
            database: database.to_string(),
            container: container.to_string(),
            resource_id,
            replica_path: replica_path(container_rid),
        })
    }

    /// The tokens every Document request carries, in ascending id order
    /// up to the names (the frame's order is free; the SDK's golden frame
    /// is in this one).
    fn document(
        &self,
        operation: u16,
        verb: &str,
        link: &str,
        activity: [u8; 16],
        payload: bool,
    ) -> RequestFrame {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let signed = auth::payload(verb, "docs", link, &date, "");
        let authorization = auth::authorization_header(&self.key, &signed);
        let mut frame = RequestFrame::new(frame::DOCUMENT, operation, activity);
        frame
            .bytes(request::RESOURCE_ID, &self.resource_id)
            .string(request::AUTHORIZATION_TOKEN, &authorization)
            .byte(request::PAYLOAD_PRESENT, u8::from(payload))
            .small_string(request::DATE, &date)
            .string(request::REPLICA_PATH, &self.replica_path)
            .string(request::DATABASE_NAME, &self.database)
            .string(request::COLLECTION_NAME, &self.container);
        frame
    }

    /// Document Read of `id` in the partition `pk_json` (a JSON array).
    pub fn read_item(
        &self,
        id: &str,
        pk_json: &str,
        transport_request_id: u32,
        activity: [u8; 16],
    ) -> Vec<u8> {
        let link = format!("dbs/{}/colls/{}/docs/{id}", self.database, self.container);
        let mut frame = self.document(frame::READ, "get", &link, activity, false);
        frame
            .string(request::DOCUMENT_NAME, id)
            .string(request::PARTITION_KEY, pk_json)
            .ulong(request::TRANSPORT_REQUEST_ID, transport_request_id);
        frame.finish(None)
    }

    /// Document Upsert of `document` in the partition `pk_json`: the
    /// operation type is the only upsert flag.
    pub fn upsert_item(
        &self,
        pk_json: &str,
        document: &[u8],
        transport_request_id: u32,
        activity: [u8; 16],
    ) -> Vec<u8> {
        let link = format!("dbs/{}/colls/{}", self.database, self.container);
        let mut frame = self.document(frame::UPSERT, "post", &link, activity, true);
        frame
            .string(request::PARTITION_KEY, pk_json)
            .ulong(request::TRANSPORT_REQUEST_ID, transport_request_id);
        frame.finish(Some(document))
    }
}

/// The path of range 0's primary replica, as the address feed names it
/// (`docs/src/reference/rntbd.md#the-address-feed`, `/` in the RID written
/// `-`), without its final `/`.
pub fn replica_path(container_rid: &str) -> String {
    format!(
        "/apps/cosmos-emulator/services/{}/partitions/0/replicas/1p",
        container_rid.replace('/', "-")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rntbd::frame::tokens_of;

    fn tokens(bytes: &[u8]) -> Vec<(u16, u8, Vec<u8>)> {
        tokens_of(bytes)
            .unwrap()
            .into_iter()
            .map(|(id, wire, value)| (id, wire, value.to_vec()))
            .collect()
    }

    #[test]
    fn a_read_is_signed_as_over_http_and_carries_its_names() {
        let key = cosmos_emulator::WELL_KNOWN_KEY;
        let signer = DirectSigner::new(key, "bench", "direct", "2Y0oAOQ+nwA=").unwrap();
        let bytes = signer.read_item("item-1", r#"["p01"]"#, 7, [9; 16]);
        assert_eq!(&bytes[4..8], &[3, 0, 3, 0], "Document, Read");
        let tokens = tokens(&bytes);
        let text = |id: u16| {
            let (_, _, value) = tokens.iter().find(|(i, _, _)| *i == id).unwrap();
            String::from_utf8(value.clone()).unwrap()
        };
        assert_eq!(text(request::DOCUMENT_NAME), "item-1");
        assert_eq!(text(request::PARTITION_KEY), r#"["p01"]"#);
        assert_eq!(
            text(request::REPLICA_PATH),
            "/apps/cosmos-emulator/services/2Y0oAOQ+nwA=/partitions/0/replicas/1p"
        );
        let ids: Vec<u16> = tokens.iter().map(|(id, _, _)| *id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ascending: {ids:x?}");
        // The emulator's own verifier accepts the token for the REST path
        // the names stand for.
        let verified = auth::verify(
            &MasterKey::from_base64(key).unwrap(),
            &auth::SignedRequest {
                verb: "GET",
                path: "/dbs/bench/colls/direct/docs/item-1",
                authorization: Some(&text(request::AUTHORIZATION_TOKEN)),
                x_ms_date: Some(&text(request::DATE)),
                date: None,
            },
            SystemTime::now(),
        );
        assert!(verified.is_ok(), "{verified:?}");
    }

    #[test]
    fn an_upsert_carries_its_document_as_the_payload() {
        let signer = DirectSigner::new(
            cosmos_emulator::WELL_KNOWN_KEY,
            "bench",
            "direct",
            "2Y0oAOQ+nwA=",
        )
        .unwrap();
        let document = br#"{"id":"a","pk":"p01"}"#;
        let bytes = signer.upsert_item(r#"["p01"]"#, document, 3, [0; 16]);
        assert_eq!(&bytes[4..8], &[3, 0, 0x13, 0], "Document, Upsert");
        let length = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
        assert_eq!(
            &bytes[length..length + 4],
            &(document.len() as u32).to_le_bytes()
        );
        assert_eq!(&bytes[length + 4..], document);
        let tokens = tokens(&bytes);
        assert!(tokens.contains(&(request::PAYLOAD_PRESENT, 0x00, vec![1])));
        assert!(tokens.contains(&(
            request::TRANSPORT_REQUEST_ID,
            0x02,
            3u32.to_le_bytes().to_vec()
        )));
        assert!(!tokens
            .iter()
            .any(|(id, _, _)| *id == request::DOCUMENT_NAME));
    }

    #[test]
    fn a_rid_with_a_slash_is_written_with_a_dash_in_the_replica_path() {
        assert_eq!(
            replica_path("ab/c+AA=="),
            "/apps/cosmos-emulator/services/ab-c+AA==/partitions/0/replicas/1p"
        );
    }
}
