//! A container's physical partition key ranges: the EPK space cut into
//! `[minInclusive, maxExclusive)` ranges, as `GET .../pkranges` lists them
//! and as requests addressed to one range
//! (`x-ms-documentdb-partitionkeyrangeid`) read them.
//!
//! The service gives a new container one physical partition per 10,000
//! RU/s it is provisioned with (autoscale: of its maximum), at least one,
//! and cuts the hash space evenly among them, with ids "0".."N-1". So a
//! container with the default 400 RU/s has the one range "0" `["", "FF")`.
//! A split (`POST /_emulator/split`) replaces one range by two children cut
//! at the midpoint of its bounds; the children take the next unused ids and
//! list the parent (and its own parents) in `parents`, and the parent's id
//! is gone for good, as in the service.
//!
//! Each range also counts its LSNs (the partition's log sequence numbers,
//! as the service numbers each physical partition's writes): a write takes
//! the next LSN of its range, and a split's children continue from their
//! parent's, so a session token or an `_lsn` read before the split stays
//! comparable with the children's.
//!
//! Where the cuts fall depends on the hashing (see [`crate::protocol::epk`]):
//! - Hash V2 and MultiHash: an EPK is 128 bits (per level) with the top two
//!   bits cleared, so the space `[0, 2^126)` is cut and each boundary
//!   written as 32 hex digits.
//! - Hash V1: an EPK starts with the 32-bit hash written as a number in
//!   the order-preserving binary encoding, so `[0, 2^32)` is cut and each
//!   boundary is that encoding of the cut (as Microsoft's emulator lays out
//!   V1 containers, e.g. `05C1D9CD673398`).

use super::range_lsns::RangeLsns;
use crate::protocol::epk;
use crate::protocol::partition_key::PartitionKeyDefinition;

/// The most one physical partition serves: a container provisioned with up
/// to this much (manual, or an autoscale maximum) has one.
pub const RU_PER_PHYSICAL_PARTITION: u32 = 10_000;
/// Above that, the service lays a new container out at 6,000 RU/s per
/// physical partition, leaving room to scale up without a split: 12,000 RU/s
/// is two, 18,000 three, 30,000 five (the documentation's examples, and the
/// Python SDK's test constants `THROUGHPUT_FOR_2_PARTITIONS = 12000`,
/// `THROUGHPUT_FOR_5_PARTITIONS = 30000`).
pub const RU_PER_NEW_PHYSICAL_PARTITION: u32 = 6_000;
/// A bound on ranges per container, so no offer can make the map huge.
pub const MAX_RANGES: usize = 1000;

/// One partition key range.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Range {
    pub id: u32,
    /// `minInclusive`: `""` for the first range.
    pub min: String,
    /// `maxExclusive`: `"FF"` for the last range.
    pub max: String,
    /// The ids of the ranges this one was split from, the nearest first.
    pub parents: Vec<u32>,
    /// The bounds as positions in the hash space (`[0, 2^126)` or
    /// `[0, 2^32)`), where a split cuts. (As text in the data directory:
    /// JSON numbers stop at 64 bits.)
    #[serde(with = "u128_text")]
    low: u128,
    #[serde(with = "u128_text")]
    high: u128,
    /// Its LSNs (`range_lsns.rs`): the partition's, which its items'
    /// `_lsn`, the `lsn` header, session tokens and change feed etags name.
    /// (Absent in data written before LSNs were per range: the items'
    /// records raise them.)
    #[serde(flatten)]
    pub lsns: RangeLsns,
}

impl Range {
    /// Whether it shares part of the hash space `[low, high)`.
    fn overlaps(&self, low: u128, high: u128) -> bool {
        self.low < high && low < self.high
    }
}

/// Why a range cannot be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitRefusal {
    /// No range has this id (never had, or gone).
    Unknown,
    /// The range is one hash value wide.
    TooNarrow,
    /// The container has [`MAX_RANGES`] ranges.
    TooMany,
}

/// The ranges of one container, in EPK order.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RangeMap {
    /// Ascending by `min`, each starting where the previous one ends.
    ranges: Vec<Range>,
    /// The id the next child gets.
    next_id: u32,
    /// How many splits the map has seen: the `pkranges` etag names it.
    version: u64,
    hash_v1: bool,
    /// False in data written while LSNs were the container's, not each
    /// range's ([`Self::settle_container_lsns`]).
    #[serde(default)]
    lsns_per_range: bool,
}

mod u128_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u128, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u128, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl RangeMap {
    /// As many ranges as `provisioned` RU/s take (at least one), cut for
    /// `definition`'s hashing.
    pub fn for_throughput(definition: &PartitionKeyDefinition, manual: u32) -> Self {
        Self::even(definition, Self::count_for_throughput(manual, false))
    }

    /// How many ranges a new container takes: one up to 10,000 RU/s, then
    /// one per 6,000 of manual throughput, or per 10,000 of an autoscale
    /// maximum (which is what a partition serves at the top of its scale).
    pub fn count_for_throughput(provisioned: u32, autoscale: bool) -> usize {
        if provisioned <= RU_PER_PHYSICAL_PARTITION {
            return 1;
        }
        let per_partition = if autoscale {
            RU_PER_PHYSICAL_PARTITION
        } else {
            RU_PER_NEW_PHYSICAL_PARTITION
        };
        provisioned.div_ceil(per_partition) as usize
    }

    /// `count` ranges (1..=[`MAX_RANGES`]) splitting the hash space evenly,
    /// with ids "0".."count-1".
    pub fn even(definition: &PartitionKeyDefinition, count: usize) -> Self {
        let count = count.clamp(1, MAX_RANGES) as u128;
        let hash_v1 = epk::is_hash_v1(definition);
        let space = Self::space(hash_v1);
        // i steps of space / count, as the service cuts them (the Python
        // SDK's test_pk_range_wrapper reads "0CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
        // and "26666666666666666666666666666664" off five ranges): the
        // remainder of the division goes to the last range.
        let cut = |i: u128| {
            if i == count {
                space
            } else {
                space / count * i
            }
        };
        let ranges = (0..count)
            .map(|i| {
                let (low, high) = (cut(i), cut(i + 1));
                Range {
                    id: i as u32,
                    min: Self::boundary(hash_v1, low),
                    max: Self::boundary(hash_v1, high),
                    parents: Vec::new(),
                    low,
                    high,
                    lsns: RangeLsns::default(),
                }
            })
            .collect();
        RangeMap {
            ranges,
            next_id: count as u32,
            version: 0,
            hash_v1,
            lsns_per_range: true,
        }
    }

    /// The size of the hash space the ranges cut.
    fn space(hash_v1: bool) -> u128 {
        if hash_v1 {
            1 << 32
        } else {
            1 << 126
        }
    }

    /// The EPK written for the position `at` of the hash space.
    fn boundary(hash_v1: bool, at: u128) -> String {
        if at == 0 {
            String::new()
        } else if at >= Self::space(hash_v1) {
            "FF".to_string()
        } else if hash_v1 {
            epk::v1_number_prefix(at as f64)
        } else {
            format!("{at:032X}")
        }
    }

    /// How many ranges (at least one).
    pub fn count(&self) -> usize {
        self.ranges.len()
    }

    /// The ranges in EPK order.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    /// How many splits the map has seen (0 for a new container).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The range with the id `id` ("0", "1", ...), if this container has it.
    /// The .NET SDK may send `{collectionRid},{id}`: the part after the
    /// comma is the id.
    pub fn by_id(&self, id: &str) -> Option<&Range> {
        self.by_number(parse_id(id)?)
    }

    /// Whether `id` names a range this container had and split.
    pub fn was_split(&self, id: &str) -> bool {
        parse_id(id).is_some_and(|number| self.ranges.iter().any(|r| r.parents.contains(&number)))
    }

    /// The range holding the EPK `epk`.
    pub fn range_of(&self, epk: &str) -> &Range {
        &self.ranges[self.position_of(epk)]
    }

    /// The index of the range holding the EPK `epk`.
    fn position_of(&self, epk: &str) -> usize {
        let last = self.ranges.len() - 1;
        self.ranges[..last].partition_point(|r| !epk::in_range(epk, "", &r.max))
    }

    /// The index (in [`Self::ranges`]) of the range holding the EPK `epk`,
    /// computed only when there are several ranges.
    pub fn index_of(&self, epk: impl FnOnce() -> String) -> usize {
        match self.ranges.len() {
            1 => 0,
            _ => self.position_of(&epk()),
        }
    }

    /// The LSNs of the range at `index` (in [`Self::ranges`]).
    pub fn lsns_mut(&mut self, index: usize) -> &mut RangeLsns {
        &mut self.ranges[index].lsns
    }

    /// The LSNs of the range holding the EPK `epk` (computed only when
    /// there are several ranges).
    pub fn lsns_at(&mut self, epk: impl FnOnce() -> String) -> &mut RangeLsns {
        let index = self.index_of(epk);
        self.lsns_mut(index)
    }

    /// Takes on the LSNs of `old`, this container's map before this one
    /// replaced it: each range continues from the highest LSN of the old
    /// ranges it overlaps, if that is beyond its own.
    pub fn carry_lsns(&mut self, old: &RangeMap) {
        for range in &mut self.ranges {
            let (low, high) = (range.low, range.high);
            for before in old.ranges.iter().filter(|r| r.overlaps(low, high)) {
                range.lsns.carry(&before.lsns);
            }
        }
    }

    /// Data written while LSNs were the container's (`log_last`, its change
    /// log's last) has been read: every range continues past it, so that a
    /// continuation or a session token from then never names a later write
    /// of a range as already seen.
    pub fn settle_container_lsns(&mut self, log_last: u64) {
        if !self.lsns_per_range {
            for range in &mut self.ranges {
                range.lsns.raise(log_last);
            }
            self.lsns_per_range = true;
        }
    }

    /// The range `id`, if this container has it.
    pub fn by_number(&self, id: u32) -> Option<&Range> {
        self.ranges.iter().find(|r| r.id == id)
    }

    /// The highest LSN of any range (what a response naming no one range
    /// reports).
    pub fn highest_lsn(&self) -> u64 {
        self.ranges.iter().map(|r| r.lsns.last()).max().unwrap_or(0)
    }

    /// The ids of this map's ranges that share part of the hash space with
    /// `range`, a range of another map cut for the same hashing: which of
    /// a shared database's physical partitions hold a container's range.
    pub fn overlapping<'a>(&'a self, range: &'a Range) -> impl Iterator<Item = u32> + 'a {
        self.ranges
            .iter()
            .filter(|r| r.overlaps(range.low, range.high))
            .map(|r| r.id)
    }

    /// Splits the range `id` at the midpoint of its bounds into two children
    /// with the next unused ids; returns them.
    pub fn split(&mut self, id: &str) -> Result<[Range; 2], SplitRefusal> {
        let parent_id = self.by_id(id).ok_or(SplitRefusal::Unknown)?.id;
        if self.ranges.len() >= MAX_RANGES {
            return Err(SplitRefusal::TooMany);
        }
        let index = self
            .ranges
            .iter()
            .position(|r| r.id == parent_id)
            .ok_or(SplitRefusal::Unknown)?;
        let parent = &self.ranges[index];
        let middle = parent.low + (parent.high - parent.low) / 2;
        if middle <= parent.low {
            return Err(SplitRefusal::TooNarrow);
        }
        let mut parents = vec![parent.id];
        parents.extend(&parent.parents);
        let left = Range {
            id: self.next_id,
            min: parent.min.clone(),
            max: Self::boundary(self.hash_v1, middle),
            parents: parents.clone(),
            low: parent.low,
            high: middle,
            lsns: parent.lsns.clone(),
        };
        let right = Range {
            id: self.next_id + 1,
            min: left.max.clone(),
            max: parent.max.clone(),
            parents,
            low: middle,
            high: parent.high,
            lsns: parent.lsns.clone(),
        };
        self.next_id += 2;
        self.version += 1;
        self.ranges
            .splice(index..=index, [left.clone(), right.clone()]);
        Ok([left, right])
    }
}

/// The range number a request names in `x-ms-documentdb-partitionkeyrangeid`:
/// `{id}`, or `{collectionRid},{id}` as the .NET SDK may send it. Only the
/// canonical spelling: "01" names no range in the service.
pub fn parse_id(text: &str) -> Option<u32> {
    let id = text.rsplit(',').next().unwrap_or_default().trim();
    // Written as the number writes itself: digits, no sign, no leading zero.
    let canonical = id.bytes().all(|b| b.is_ascii_digit()) && (id == "0" || !id.starts_with('0'));
    canonical.then(|| id.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Only a number's own spelling names a range: what formatting the
    /// parsed number gives back.
    #[test]
    fn a_range_id_is_read_in_its_canonical_spelling_only() {
        let canonical = |id: &str| {
            let id = id.rsplit(',').next().unwrap_or_default().trim();
            let number: u32 = id.parse().ok()?;
            (number.to_string() == id).then_some(number)
        };
        for id in [
            "0",
            "1",
            "7",
            "10",
            "42",
            "4294967295",
            "4294967296",
            "01",
            "00",
            "+1",
            "-1",
            "",
            " 3 ",
            "a",
            "1a",
            "rid,5",
            "rid,05",
            "rid,",
            "1,2,3",
            "١",
        ] {
            assert_eq!(parse_id(id), canonical(id), "{id:?}");
        }
    }

    fn definition(wire: serde_json::Value) -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&wire)).unwrap()
    }

    fn bounds(map: &RangeMap, index: usize) -> (&str, &str) {
        let range = &map.ranges()[index];
        (&range.min, &range.max)
    }

    fn id_of(map: &RangeMap, id: &str) -> Option<u32> {
        map.by_id(id).map(|r| r.id)
    }

    #[test]
    fn ranges_of_another_map_overlap_where_their_bounds_meet() {
        let def = definition(json!({"paths": ["/pk"]}));
        let database = RangeMap::even(&def, 2);
        let one = RangeMap::even(&def, 1);
        let overlapping = |range: &Range| database.overlapping(range).collect::<Vec<_>>();
        assert_eq!(overlapping(&one.ranges()[0]), [0, 1]);
        let mut four = RangeMap::even(&def, 4);
        assert_eq!(overlapping(&four.ranges()[1]), [0]);
        assert_eq!(overlapping(&four.ranges()[2]), [1]);
        let [left, _] = four.split("3").unwrap();
        assert_eq!(overlapping(&left), [1]);
        let three = RangeMap::even(&def, 3);
        assert_eq!(overlapping(&three.ranges()[1]), [0, 1], "across the cut");
    }

    #[test]
    fn default_throughput_is_one_range_over_everything() {
        let map = RangeMap::for_throughput(&definition(json!({"paths": ["/pk"]})), 400);
        assert_eq!(map.count(), 1);
        assert_eq!(bounds(&map, 0), ("", "FF"));
        assert_eq!(id_of(&map, "0"), Some(0));
        assert_eq!(id_of(&map, "1"), None);
        assert_eq!(id_of(&map, "AgAAAIAAAAE=,0"), Some(0));
        assert_eq!(id_of(&map, "01"), None);
        assert_eq!(id_of(&map, ""), None);
    }

    #[test]
    fn ranges_as_the_service_lays_out_a_new_container() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        assert_eq!(RangeMap::for_throughput(&def, 10_000).count(), 1);
        assert_eq!(RangeMap::for_throughput(&def, 10_100).count(), 2);
        assert_eq!(RangeMap::for_throughput(&def, 12_000).count(), 2);
        assert_eq!(RangeMap::for_throughput(&def, 18_000).count(), 3);
        assert_eq!(RangeMap::for_throughput(&def, 30_000).count(), 5);
        assert_eq!(RangeMap::count_for_throughput(30_000, true), 3);
        assert_eq!(RangeMap::count_for_throughput(10_000, true), 1);
    }

    #[test]
    fn v2_cuts_the_126_bit_space_evenly() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let map = RangeMap::even(&def, 4);
        assert_eq!(bounds(&map, 0), ("", "10000000000000000000000000000000"));
        assert_eq!(bounds(&map, 3), ("30000000000000000000000000000000", "FF"));
        assert_eq!(map.range_of("").id, 0);
        assert_eq!(map.range_of("0FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF").id, 0);
        assert_eq!(map.range_of("10000000000000000000000000000000").id, 1);
        assert_eq!(map.range_of("3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF").id, 3);
    }

    #[test]
    fn many_ranges_stay_ascending_and_in_the_space() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let map = RangeMap::even(&def, MAX_RANGES);
        assert_eq!(map.count(), MAX_RANGES);
        for i in 1..MAX_RANGES {
            let (min, max) = bounds(&map, i);
            assert_eq!(bounds(&map, i - 1).1, min);
            assert_eq!(epk::compare(min, max), std::cmp::Ordering::Less, "{i}");
            assert!(epk::in_range(min, "", "40"), "{min}");
        }
        // Eight steps of a thousandth of the space.
        assert_eq!(
            bounds(&map, 8).0,
            format!("{:032X}", (1u128 << 126) / 1000 * 8)
        );
    }

    #[test]
    fn five_ranges_cut_where_the_service_cuts() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let map = RangeMap::for_throughput(&def, 30_000);
        assert_eq!(bounds(&map, 0), ("", "0CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"));
        assert_eq!(
            bounds(&map, 3),
            (
                "26666666666666666666666666666664",
                "33333333333333333333333333333330"
            )
        );
        assert_eq!(bounds(&map, 4).1, "FF");
    }

    #[test]
    fn v1_cuts_are_encoded_hash_numbers() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 1}));
        let map = RangeMap::even(&def, 2);
        // 2^31 as the order-preserving encoding of a double.
        assert_eq!(bounds(&map, 0).1, epk::v1_number_prefix(2_147_483_648.0));
        assert!(bounds(&map, 0).1.starts_with("05C1"));
        for key in ["a", "b", "c", "d", "e", "f"] {
            let e = epk::effective_partition_key(&def, &json!([key]));
            let range = map.range_of(&e);
            assert!(epk::in_range(&e, &range.min, &range.max), "{key} {e}");
        }
    }

    #[test]
    fn a_split_cuts_at_the_midpoint_with_new_ids_and_parents() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let mut map = RangeMap::even(&def, 2);
        let [left, right] = map.split("1").unwrap();
        assert_eq!((left.id, right.id), (2, 3));
        assert_eq!(left.parents, vec![1]);
        assert_eq!(left.min, "20000000000000000000000000000000");
        assert_eq!(left.max, "30000000000000000000000000000000");
        assert_eq!(
            (right.min.as_str(), right.max.as_str()),
            (left.max.as_str(), "FF")
        );
        assert_eq!(map.version(), 1);
        let ids: Vec<u32> = map.ranges().iter().map(|r| r.id).collect();
        assert_eq!(ids, [0, 2, 3]);
        assert!(map.by_id("1").is_none() && map.was_split("1"));
        assert!(!map.was_split("0") && !map.was_split("9"));
        assert_eq!(map.range_of("2FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF").id, 2);
        assert_eq!(map.range_of("30000000000000000000000000000000").id, 3);
        // A grandchild names its parent, then the parent's parents.
        let [grandchild, _] = map.split("3").unwrap();
        assert_eq!((grandchild.id, grandchild.parents), (4, vec![3, 1]));
        assert_eq!(map.split("1"), Err(SplitRefusal::Unknown));
        assert_eq!(map.split("x"), Err(SplitRefusal::Unknown));
    }

    #[test]
    fn v1_splits_cut_the_32_bit_hash_and_narrow_ranges_refuse() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 1}));
        let mut map = RangeMap::even(&def, 1);
        let [left, _] = map.split("0").unwrap();
        assert_eq!(left.max, epk::v1_number_prefix(2_147_483_648.0));
        // Halve the first range until it holds one hash value.
        let mut id = left.id.to_string();
        for _ in 0..31 {
            let [first, _] = map.split(&id).unwrap();
            id = first.id.to_string();
        }
        assert_eq!(map.split(&id), Err(SplitRefusal::TooNarrow));
        for window in map.ranges().windows(2) {
            assert_eq!(window[0].max, window[1].min);
            assert_eq!(
                epk::compare(&window[0].min, &window[0].max),
                std::cmp::Ordering::Less
            );
        }
    }

    #[test]
    fn no_split_past_the_bound_on_ranges() {
        let def = definition(json!({"paths": ["/pk"]}));
        let mut map = RangeMap::even(&def, MAX_RANGES);
        assert_eq!(map.split("0"), Err(SplitRefusal::TooMany));
    }

    /// A map read back from data written while LSNs were the container's
    /// (no per-range LSNs in its JSON) continues every range past the
    /// container's last LSN once; a map written since keeps its own.
    #[test]
    fn a_map_from_before_per_range_lsns_settles_past_the_containers() {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}));
        let mut map = RangeMap::even(&def, 2);
        map.lsns_at(String::new).next(1);
        let mut legacy = serde_json::to_value(&map).unwrap();
        legacy.as_object_mut().unwrap().remove("lsns_per_range");
        for range in legacy["ranges"].as_array_mut().unwrap() {
            range.as_object_mut().unwrap().remove("lsn");
        }
        let mut legacy: RangeMap = serde_json::from_value(legacy).unwrap();
        legacy.settle_container_lsns(40);
        assert!(legacy.ranges().iter().all(|r| r.lsns.last() == 40));
        legacy.settle_container_lsns(90);
        assert!(legacy.ranges().iter().all(|r| r.lsns.last() == 40), "once");
        let mut current: RangeMap =
            serde_json::from_str(&serde_json::to_string(&map).unwrap()).unwrap();
        current.settle_container_lsns(40);
        let lsns: Vec<u64> = current.ranges().iter().map(|r| r.lsns.last()).collect();
        assert_eq!(lsns, [1, 0]);
    }
}
