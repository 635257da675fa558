//! Where a change feed reader is: past which LSN of each range it has read.
//! Its text is the `etag` of a change feed answer, which the reader sends
//! back in `If-None-Match`:
//!
//! - `"12"` for a feed of one range (the service's form: the range's LSN,
//!   which the Java change feed processor's estimator subtracts from the
//!   latest one; a write's `lsn` header is one too). It holds for every
//!   range, so a reader whose range was split goes on in both children,
//!   which continue their parent's numbering;
//! - `"0:12,3:40"` for a feed that spans several ranges (a container read
//!   without a range or a partition key): each range's LSN. A range the
//!   text does not name takes the entry of its nearest parent.

use super::ranges::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedPosition {
    /// Past this LSN in every range.
    Every(u64),
    /// Past each range's own LSN.
    Each(Vec<(u32, u64)>),
}

impl FeedPosition {
    /// Reads an etag's text (quoted or not); `None` if it is not one.
    pub fn parse(text: &str) -> Option<FeedPosition> {
        let text = text.trim().trim_matches('"');
        if !text.contains(':') {
            return text.parse().ok().map(FeedPosition::Every);
        }
        let entries = text
            .split(',')
            .map(|entry| {
                let (range, lsn) = entry.split_once(':')?;
                Some((range.trim().parse().ok()?, lsn.trim().parse().ok()?))
            })
            .collect::<Option<Vec<(u32, u64)>>>()?;
        Some(FeedPosition::Each(entries))
    }

    /// The etag naming `positions`, each range's LSN: a plain LSN for one;
    /// `0` for a feed whose scope reaches no range (it has read nothing).
    pub fn etag(positions: &[(u32, u64)]) -> String {
        match positions {
            [] => "0".to_string(),
            [(_, lsn)] => lsn.to_string(),
            _ => positions
                .iter()
                .map(|(range, lsn)| format!("{range}:{lsn}"))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The LSN of `range` past which the reader has read; `None` when the
    /// position names neither it nor a parent of it.
    pub fn after(&self, range: &Range) -> Option<u64> {
        match self {
            FeedPosition::Every(lsn) => Some(*lsn),
            FeedPosition::Each(entries) => std::iter::once(&range.id)
                .chain(&range.parents)
                .find_map(|id| entries.iter().find(|(r, _)| r == id).map(|(_, lsn)| *lsn)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::store::RangeMap;
    use crate::protocol::partition_key::PartitionKeyDefinition;

    #[test]
    fn etags_of_one_range_and_of_several_read_back() {
        assert_eq!(FeedPosition::parse("\"12\""), Some(FeedPosition::Every(12)));
        assert_eq!(FeedPosition::etag(&[(3, 12)]), "12");
        assert_eq!(
            FeedPosition::parse(&FeedPosition::etag(&[])),
            Some(FeedPosition::Every(0))
        );
        let several = FeedPosition::etag(&[(0, 12), (3, 40)]);
        assert_eq!(several, "0:12,3:40");
        assert_eq!(
            FeedPosition::parse(&format!("\"{several}\"")),
            Some(FeedPosition::Each(vec![(0, 12), (3, 40)]))
        );
        for bad in ["", "x", "1:", ":2", "1:2,", "-1", "1:-2"] {
            assert_eq!(FeedPosition::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_split_range_takes_its_parents_entry() {
        let definition = PartitionKeyDefinition::parse(Some(
            &serde_json::json!({"paths": ["/pk"], "kind": "Hash", "version": 2}),
        ))
        .unwrap();
        let mut map = RangeMap::even(&definition, 2);
        let [left, right] = map.split("1").unwrap();
        let position = FeedPosition::Each(vec![(0, 5), (1, 9)]);
        assert_eq!(position.after(&map.ranges()[0]), Some(5));
        assert_eq!(position.after(&left), Some(9));
        assert_eq!(position.after(&right), Some(9));
        let other = FeedPosition::Each(vec![(7, 1)]);
        assert_eq!(other.after(&left), None);
        assert_eq!(FeedPosition::Every(4).after(&right), Some(4));
    }
}
