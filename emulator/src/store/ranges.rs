//! A container's physical partition key ranges: the EPK space cut into
//! `[minInclusive, maxExclusive)` ranges with ids "0".."N-1", as
//! `GET .../pkranges` lists them and as requests addressed to one range
//! (`x-ms-documentdb-partitionkeyrangeid`) read them.
//!
//! The service gives a new container one physical partition per 10,000
//! RU/s it is provisioned with (autoscale: of its maximum), at least one,
//! and cuts the hash space evenly among them. So a container with the
//! default 400 RU/s has the one range "0" `["", "FF")`.
//!
//! Where the cuts fall depends on the hashing (see [`crate::epk`]):
//! - Hash V2 and MultiHash: an EPK is 128 bits (per level) with the top two
//!   bits cleared, so the space `[0, 2^126)` is cut evenly and each
//!   boundary written as 32 hex digits.
//! - Hash V1: an EPK starts with the 32-bit hash written as a number in
//!   the order-preserving binary encoding, so `[0, 2^32)` is cut evenly
//!   and each boundary is that encoding of the cut (as Microsoft's
//!   emulator lays out V1 containers, e.g. `05C1D9CD673398`).

use crate::epk;
use crate::partition_key::PartitionKeyDefinition;

/// One physical partition's throughput: the service's rule of thumb.
pub const RU_PER_PHYSICAL_PARTITION: u32 = 10_000;
/// A bound on ranges per container, so no offer can make the map huge.
pub const MAX_RANGES: usize = 1000;

/// The ranges of one container, in EPK order; range `i` has id `i`.
#[derive(Debug, Clone)]
pub struct RangeMap {
    /// The N-1 inner boundaries, ascending: range `i` is
    /// `[boundaries[i-1] or "", boundaries[i] or "FF")`.
    boundaries: Vec<String>,
}

impl RangeMap {
    /// As many ranges as `provisioned` RU/s take (at least one), cut for
    /// `definition`'s hashing.
    pub fn for_throughput(definition: &PartitionKeyDefinition, provisioned: u32) -> Self {
        Self::even(definition, Self::count_for_throughput(provisioned))
    }

    /// How many ranges `provisioned` RU/s take: one per 10,000, at least one.
    pub fn count_for_throughput(provisioned: u32) -> usize {
        provisioned.div_ceil(RU_PER_PHYSICAL_PARTITION).max(1) as usize
    }

    /// `count` ranges (1..=[`MAX_RANGES`]) splitting the hash space evenly.
    pub fn even(definition: &PartitionKeyDefinition, count: usize) -> Self {
        let count = count.clamp(1, MAX_RANGES) as u128;
        let boundaries = (1..count)
            .map(|i| {
                if epk::is_hash_v1(definition) {
                    let cut = (i * (1u128 << 32) / count) as u32;
                    epk::v1_number_prefix(f64::from(cut))
                } else {
                    // i * 2^126 / count, without overflowing 128 bits.
                    let space = 1u128 << 126;
                    let cut = space / count * i + space % count * i / count;
                    format!("{cut:032X}")
                }
            })
            .collect();
        RangeMap { boundaries }
    }

    /// How many ranges (at least one).
    pub fn count(&self) -> usize {
        self.boundaries.len() + 1
    }

    /// The bounds of range `index`: `(minInclusive, maxExclusive)`.
    pub fn bounds(&self, index: usize) -> (&str, &str) {
        let min = if index == 0 {
            ""
        } else {
            &self.boundaries[index - 1]
        };
        let max = self.boundaries.get(index).map_or("FF", String::as_str);
        (min, max)
    }

    /// The range with the id `id` ("0", "1", ...), if this container has it.
    /// The .NET SDK may send `{collectionRid},{id}`: the part after the
    /// comma is the id.
    pub fn by_id(&self, id: &str) -> Option<usize> {
        let id = id.rsplit(',').next().unwrap_or_default().trim();
        // Only the canonical spelling: "01" names no range in the service.
        let index: usize = id.parse().ok()?;
        (index < self.count() && index.to_string() == id).then_some(index)
    }

    /// The index (and id) of the range holding the EPK `epk`.
    pub fn range_of(&self, epk: &str) -> usize {
        self.boundaries
            .partition_point(|boundary| !epk::in_range(epk, "", boundary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(wire: serde_json::Value) -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&wire)).unwrap()
    }

    #[test]
    fn default_throughput_is_one_range_over_everything() {
        let map = RangeMap::for_throughput(&definition(json!({"paths": ["/pk"]})), 400);
        assert_eq!(map.count(), 1);
        assert_eq!(map.bounds(0), ("", "FF"));
        assert_eq!(map.by_id("0"), Some(0));
        assert_eq!(map.by_id("1"), None);
        assert_eq!(map.by_id("AgAAAIAAAAE=,0"), Some(0));
        assert_eq!(map.by_id("01"), None);
        assert_eq!(map.by_id(""), None);
    }

    #[test]
    fn one_range_per_ten_thousand_ru() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        assert_eq!(RangeMap::for_throughput(&def, 10_000).count(), 1);
        assert_eq!(RangeMap::for_throughput(&def, 10_100).count(), 2);
        assert_eq!(RangeMap::for_throughput(&def, 30_000).count(), 3);
    }

    #[test]
    fn v2_cuts_the_126_bit_space_evenly() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let map = RangeMap::even(&def, 4);
        assert_eq!(map.bounds(0), ("", "10000000000000000000000000000000"));
        assert_eq!(map.bounds(3), ("30000000000000000000000000000000", "FF"));
        assert_eq!(map.range_of(""), 0);
        assert_eq!(map.range_of("0FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"), 0);
        assert_eq!(map.range_of("10000000000000000000000000000000"), 1);
        assert_eq!(map.range_of("3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"), 3);
    }

    #[test]
    fn many_ranges_stay_ascending_and_in_the_space() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let map = RangeMap::even(&def, MAX_RANGES);
        assert_eq!(map.count(), MAX_RANGES);
        for i in 1..MAX_RANGES {
            let (min, max) = map.bounds(i);
            assert_eq!(map.bounds(i - 1).1, min);
            assert_eq!(epk::compare(min, max), std::cmp::Ordering::Less, "{i}");
            assert!(epk::in_range(min, "", "40"), "{min}");
        }
        // 8/1000 of the space is 1/125 of it.
        assert_eq!(map.bounds(8).0, format!("{:032X}", (1u128 << 126) / 125));
    }

    #[test]
    fn v1_cuts_are_encoded_hash_numbers() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 1}));
        let map = RangeMap::even(&def, 2);
        // 2^31 as the order-preserving encoding of a double.
        assert_eq!(map.bounds(0).1, epk::v1_number_prefix(2_147_483_648.0));
        assert!(map.bounds(0).1.starts_with("05C1"));
        for key in ["a", "b", "c", "d", "e", "f"] {
            let e = epk::effective_partition_key(&def, &json!([key]));
            let index = map.range_of(&e);
            let (min, max) = map.bounds(index);
            assert!(epk::in_range(&e, min, max), "{key} {e}");
        }
    }
}
