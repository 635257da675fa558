//! The documents the bench stores: JSON items of an exact size, spread
//! over a fixed number of logical partitions, addressed by a sequence number,
//! with a few small fields the queries group, join and filter on.

use bytes::Bytes;

/// Logical partitions (`/pk` values) the items are spread over.
pub const PARTITIONS: usize = 64;

/// The id of item `seq`.
pub fn id(seq: usize) -> String {
    format!("item-{seq:08}")
}

/// The partition key value of item `seq`.
pub fn partition(seq: usize) -> String {
    format!("p{:02}", seq % PARTITIONS)
}

/// Groups (`grp` values) the items fall into.
pub const GROUPS: usize = 10;

/// The group of item `seq`: `seq % GROUPS`.
pub fn group(seq: usize) -> usize {
    seq % GROUPS
}

/// The three tags of item `seq`: `a` + seq mod 3, `b` + seq mod 5,
/// `c` + seq mod 7 (three distinct strings; each value tags about a third,
/// fifth or seventh of the items).
pub fn tags(seq: usize) -> [String; 3] {
    [
        format!("a{}", seq % 3),
        format!("b{}", seq % 5),
        format!("c{}", seq % 7),
    ]
}

/// The `x-ms-documentdb-partitionkey` header of item `seq`: a JSON array.
pub fn partition_header(seq: usize) -> String {
    format!("[\"{}\"]", partition(seq))
}

/// Item `seq` as JSON of exactly `size` bytes (or the smallest it can be,
/// if `size` is smaller): `{"id", "pk", "seq", "grp", "tags", ["ttl",]
/// "payload"}`, the payload padding the rest.
pub fn document(seq: usize, ttl: Option<i64>, size: usize) -> Bytes {
    let [a, b, c] = tags(seq);
    let mut head = format!(
        "{{\"id\":\"{}\",\"pk\":\"{}\",\"seq\":{seq},\"grp\":{},\"tags\":[\"{a}\",\"{b}\",\"{c}\"]",
        id(seq),
        partition(seq),
        group(seq)
    );
    if let Some(ttl) = ttl {
        head.push_str(&format!(",\"ttl\":{ttl}"));
    }
    const TAIL: &str = ",\"payload\":\"\"}";
    let padding = size.saturating_sub(head.len() + TAIL.len());
    let mut json = String::with_capacity(size.max(head.len() + TAIL.len()));
    json.push_str(&head);
    json.push_str(",\"payload\":\"");
    // Letters that vary with the position, not one repeated byte.
    json.extend((0..padding).map(|i| (b'a' + ((seq + i) % 26) as u8) as char));
    json.push_str("\"}");
    Bytes::from(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::Value;

    #[rstest]
    #[case(0, None, 1024)]
    #[case(123_456, Some(60), 1024)]
    #[case(99_999_999, Some(-1), 300)]
    fn documents_have_the_exact_size_and_their_fields(
        #[case] seq: usize,
        #[case] ttl: Option<i64>,
        #[case] size: usize,
    ) {
        let bytes = document(seq, ttl, size);
        assert_eq!(bytes.len(), size);
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value["id"], id(seq));
        assert_eq!(value["pk"], partition(seq));
        assert_eq!(value["seq"], seq);
        assert_eq!(value["grp"], group(seq));
        assert_eq!(value["tags"], serde_json::json!(tags(seq)));
        assert_eq!(value.get("ttl").and_then(Value::as_i64), ttl);
    }

    #[test]
    fn a_size_too_small_gives_the_smallest_document() {
        let bytes = document(1, None, 10);
        assert!(bytes.len() > 10);
        assert_eq!(
            serde_json::from_slice::<Value>(&bytes).unwrap()["payload"],
            ""
        );
    }

    #[test]
    fn partition_header_is_a_json_array_of_the_partition() {
        assert_eq!(partition_header(65), "[\"p01\"]");
    }
}
