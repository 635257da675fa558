//! Effective partition keys (EPK): the hex string a partition key value
//! hashes to, as the service and the SDKs compute it. The SDKs scope change
//! feeds, queries and feed ranges by EPK ranges (`x-ms-start-epk` /
//! `x-ms-end-epk`: upper-case hex, `""` .. `"FF"` for everything), so the
//! emulator computes each item's EPK from its canonical partition key
//! (see [`crate::protocol::partition_key`]) to answer them.
//!
//! Three schemes, picked by the container's definition:
//! - Hash, version 2 (the default): MurmurHash3 x64_128 (seed 0) of the
//!   components' hashing bytes, the 16 bytes reversed (`h2` then `h1`, big
//!   endian), the top two bits cleared so that every EPK sorts below `"FF"`.
//! - MultiHash (hierarchical keys): one such hash per component, concatenated.
//! - Hash, version 1 (legacy): MurmurHash3 x86_32 of the hashing bytes,
//!   written as a number, followed by the binary encoding of the (truncated)
//!   value.
//!
//! A component is hashed by its type marker and payload: strings as UTF-8
//! (ending in 0xFF in V2, 0x00 in V1), every number as the little-endian
//! IEEE double of its value (so `1` and `1.0` are one key, and integers
//! beyond 2^53 round as doubles do), `true`, `false`, `null`, and
//! "undefined" (a missing path, stored as `{}`).
//!
//! Where the SDKs disagree this follows the service (the .NET SDK's
//! algorithm, which JavaScript also follows) rather than Python's quirks:
//! V1 hashes integers as doubles (Python first wraps them to a u32, so `-1`
//! differs), V1 encodes `null` as 0x01 (Python writes nothing), V1 truncates
//! strings to 100 UTF-16 units (Python counts code points) and upper-cases
//! the hex (Python's V1 is lower case).

use std::cmp::Ordering;
use std::io::Cursor;

use serde_json::Value;

use crate::protocol::partition_key::PartitionKeyDefinition;

/// Type markers written before each component (the SDKs' `PartitionKeyComponentType`).
mod marker {
    pub const UNDEFINED: u8 = 0x00;
    pub const NULL: u8 = 0x01;
    pub const FALSE: u8 = 0x02;
    pub const TRUE: u8 = 0x03;
    pub const NUMBER: u8 = 0x05;
    pub const STRING: u8 = 0x08;
}

/// V1 keeps at most this many UTF-16 units of a string.
const V1_MAX_STRING_CHARS: usize = 100;
/// V1's binary encoding appends at most this many bytes of a string (+1 past it).
const V1_MAX_STRING_BYTES: usize = 100;

/// The effective partition key of `pk`, a canonical partition key: the JSON
/// array of the item's values at the definition's paths (`["a"]`, `[1]`,
/// `[null]`, `[{}]` for undefined, `[]` for a container without partition
/// key). Returns upper-case hex; `""` (the minimum) for `[]`.
///
/// Objects and arrays other than `{}` cannot be partition key values in
/// the service; they hash here as undefined, like a missing path, rather
/// than fail.
pub fn effective_partition_key(definition: &PartitionKeyDefinition, pk: &Value) -> String {
    let components = match pk {
        Value::Array(values) => values.as_slice(),
        other => std::slice::from_ref(other),
    };
    if components.is_empty() {
        return String::new();
    }
    let kind = definition.wire.get("kind").and_then(Value::as_str);
    if kind == Some("MultiHash") {
        components
            .iter()
            .map(|c| hash_v2(std::slice::from_ref(c)))
            .collect()
    } else if is_hash_v1(definition) {
        hash_v1(components)
    } else {
        hash_v2(components)
    }
}

/// Whether the definition hashes with the legacy V1 scheme: so does a
/// container made without a partition key, whose system key the SDKs read
/// without a version (`partition_key::system_key_definition`).
pub fn is_hash_v1(definition: &PartitionKeyDefinition) -> bool {
    if definition.wire.is_null() {
        return true;
    }
    definition.wire.get("kind").and_then(Value::as_str) != Some("MultiHash")
        && definition.wire.get("version").and_then(Value::as_i64) == Some(1)
}

/// The EPK prefix V1 writes for a hash value: where a range boundary
/// between V1 hashes falls (see `data/store/ranges.rs`).
pub fn v1_number_prefix(hash: f64) -> String {
    let mut encoded = Vec::new();
    write_number_for_binary_encoding(hash, &mut encoded);
    hex_upper(&encoded)
}

/// Whether `epk` lies in `[min_inclusive, max_exclusive)`. EPKs are ordered
/// as their hex strings (the SDKs' `Range.contains` compares the
/// upper-cased strings), so `""` is the minimum and `"FF"` is above every
/// EPK; case is ignored, as the SDKs upper-case range bounds.
pub fn in_range(epk: &str, min_inclusive: &str, max_exclusive: &str) -> bool {
    compare(min_inclusive, epk) != Ordering::Greater
        && compare(epk, max_exclusive) == Ordering::Less
}

/// EPK order: hex strings compared without regard to case.
pub fn compare(a: &str, b: &str) -> Ordering {
    let upper = |s: &str| {
        s.bytes()
            .map(|b| b.to_ascii_uppercase())
            .collect::<Vec<_>>()
    };
    if a.bytes().any(|b| b.is_ascii_lowercase()) || b.bytes().any(|b| b.is_ascii_lowercase()) {
        upper(a).cmp(&upper(b))
    } else {
        a.cmp(b)
    }
}

fn hash_v2(components: &[Value]) -> String {
    let mut bytes = Vec::new();
    for component in components {
        write_for_hashing(component, 0xFF, &mut bytes);
    }
    let hash = murmur3::murmur3_x64_128(&mut Cursor::new(bytes), 0)
        .expect("reading from memory cannot fail");
    // The crate returns `h2 << 64 | h1`; the SDKs lay out `h1` then `h2`
    // little endian and reverse that, which is this value big endian.
    let mut reversed = hash.to_be_bytes();
    reversed[0] &= 0x3F;
    hex_upper(&reversed)
}

fn hash_v1(components: &[Value]) -> String {
    let truncated: Vec<Value> = components.iter().map(truncate_v1).collect();
    let mut bytes = Vec::new();
    for component in &truncated {
        write_for_hashing(component, 0x00, &mut bytes);
    }
    let hash =
        murmur3::murmur3_32(&mut Cursor::new(bytes), 0).expect("reading from memory cannot fail");
    let mut encoded = Vec::new();
    write_number_for_binary_encoding(f64::from(hash), &mut encoded);
    for component in &truncated {
        write_for_binary_encoding(component, &mut encoded);
    }
    hex_upper(&encoded)
}

/// The bytes a component contributes to the hashed input.
fn write_for_hashing(component: &Value, string_suffix: u8, out: &mut Vec<u8>) {
    match component {
        Value::Bool(true) => out.push(marker::TRUE),
        Value::Bool(false) => out.push(marker::FALSE),
        Value::Null => out.push(marker::NULL),
        Value::Number(n) => {
            out.push(marker::NUMBER);
            out.extend_from_slice(&number(n).to_le_bytes());
        }
        Value::String(s) => {
            out.push(marker::STRING);
            out.extend_from_slice(s.as_bytes());
            out.push(string_suffix);
        }
        Value::Object(_) | Value::Array(_) => out.push(marker::UNDEFINED),
    }
}

/// V1's order-preserving binary encoding of a component.
fn write_for_binary_encoding(component: &Value, out: &mut Vec<u8>) {
    match component {
        Value::Bool(true) => out.push(marker::TRUE),
        Value::Bool(false) => out.push(marker::FALSE),
        Value::Null => out.push(marker::NULL),
        Value::Number(n) => write_number_for_binary_encoding(number(n), out),
        Value::String(s) => {
            out.push(marker::STRING);
            let bytes = s.as_bytes();
            let short = bytes.len() <= V1_MAX_STRING_BYTES;
            let written = if short {
                bytes
            } else {
                &bytes[..V1_MAX_STRING_BYTES + 1]
            };
            out.extend(written.iter().map(|&b| b.saturating_add(1)));
            if short {
                out.push(0x00);
            }
        }
        Value::Object(_) | Value::Array(_) => out.push(marker::UNDEFINED),
    }
}

/// The number marker, the first byte of the order-preserving u64 form of
/// the double, then 7 bits per byte with a continuation bit (1), the last
/// byte ending in 0.
fn write_number_for_binary_encoding(value: f64, out: &mut Vec<u8>) {
    out.push(marker::NUMBER);
    let bits = value.to_bits();
    let mut payload = if bits < 1 << 63 {
        bits ^ (1 << 63)
    } else {
        bits.wrapping_neg()
    };
    out.push((payload >> 56) as u8);
    payload <<= 8;
    let mut byte = 0u8;
    let mut first = true;
    while payload != 0 {
        if !first {
            out.push(byte);
        }
        first = false;
        byte = (payload >> 56) as u8 | 0x01;
        payload <<= 7;
    }
    out.push(byte & 0xFE);
}

/// V1 keeps the first 100 UTF-16 units of a string, as the service (.NET
/// `Substring`) does; a surrogate pair cut in half leaves a lone surrogate,
/// which UTF-8 encoding replaces with U+FFFD.
fn truncate_v1(component: &Value) -> Value {
    let Value::String(s) = component else {
        return component.clone();
    };
    let mut units = 0;
    let mut truncated = String::new();
    for c in s.chars() {
        let width = c.len_utf16();
        if units + width > V1_MAX_STRING_CHARS {
            if units < V1_MAX_STRING_CHARS {
                truncated.push(char::REPLACEMENT_CHARACTER);
            }
            return Value::String(truncated);
        }
        units += width;
        truncated.push(c);
    }
    component.clone()
}

fn number(n: &serde_json::Number) -> f64 {
    // Always `Some` without serde_json's `arbitrary_precision`; i64 and u64
    // round to the nearest double, as the SDKs' `float(int)` does.
    n.as_f64().unwrap_or(f64::NAN)
}

fn hex_upper(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02X}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;
    use serde_json::json;

    fn definition(value: Value) -> PartitionKeyDefinition {
        PartitionKeyDefinition::parse(Some(&value)).unwrap()
    }

    fn hash_v2_def() -> PartitionKeyDefinition {
        definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 2}))
    }

    // Expected values: the official Python SDK (azure-cosmos, in target/sdk-venv), as
    //   from azure.cosmos.partition_key import PartitionKey, NonePartitionKeyValue
    //   PartitionKey(path="/pk", kind="Hash", version=2)._get_effective_partition_key_string([V])
    // with V the Python value in each row's comment; the JavaScript SDK's
    // hashV2PartitionKey([V]) gives the same for every row.
    #[rstest]
    #[case::ascii(json!(["a"]), "3A5381E1114EB8D3FCC90795045B49B7")] // V = "a"
    #[case::empty_string(json!([""]), "32E9366E637A71B4E710384B2F4970A0")] // V = ""
    #[case::longer_than_a_block(json!(["a string longer than sixteen bytes"]), "35A4DA0435A78E6D4C7D4667358D6A01")] // V = "a string longer than sixteen bytes"
    #[case::latin(json!(["héllo wörld"]), "3ED662DB76453F5B89C3DE61C1B8A954")] // V = "héllo wörld"
    #[case::cjk(json!(["日本語"]), "3F0624929BDE45571F050DCA6A1CB775")] // V = "日本語"
    #[case::emoji(json!(["😀"]), "28D7FCB721E75FBE0DAC3D71DAB82766")] // V = "😀"
    #[case::zero(json!([0]), "155B95BEDAC4B1E9EC1CDC9BB0DDDE58")] // V = 0
    #[case::one(json!([1]), "20CD98B339BA78A5D0CF6953B87070B0")] // V = 1
    #[case::one_as_float(json!([1.0]), "20CD98B339BA78A5D0CF6953B87070B0")] // V = 1.0
    #[case::minus_one(json!([-1]), "19938E7A936C1C5B9E3AE842BBC16839")] // V = -1
    #[case::fraction(json!([1.5]), "35C5DDEB6C795D16A9963C73C54E97BC")] // V = 1.5
    #[case::negative_fraction(json!([-2.25]), "150CCB33B83B8BC44A15C6137E58AD08")] // V = -2.25
    #[case::huge(json!([1e300]), "1234CB21048B20039B22F11DBB13CD7B")] // V = 1e300
    #[case::beyond_2_pow_53(json!([9007199254740993_u64]), "15335910D01122E3D99DA5DE569B065D")] // V = 2**53 + 1 (hashes as the double 2**53)
    #[case::bool_true(json!([true]), "0E711127C5B5A8E4726AC6DD306A3E59")] // V = True
    #[case::bool_false(json!([false]), "2FE1BE91E90A3439635E0E9E37361EF2")] // V = False
    #[case::null(json!([null]), "378867E4430E67857ACE5C908374FE16")] // V = None
    #[case::undefined(json!([{}]), "11622DAA78F835834610ABE56EFF5CB5")] // V = {} and V = NonePartitionKeyValue (same value)
    fn hash_v2_matches_the_python_sdk(#[case] pk: Value, #[case] expected: &str) {
        assert_eq!(effective_partition_key(&hash_v2_def(), &pk), expected);
    }

    // Expected values: PartitionKey(path=["/a", "/b"(, "/c")], kind="MultiHash")
    //   ._get_effective_partition_key_string(V), V in each row's comment;
    // the JavaScript SDK's hashMultiHashPartitionKey(V) gives the same.
    #[rstest]
    #[case::two(json!({"paths": ["/a", "/b"]}), json!(["tenant", 42]),
        "3B67F777541374F849FC7793DE5DF91508E6D561F6FD951DCC25E7E4EA2884B5")] // V = ["tenant", 42]
    #[case::three(json!({"paths": ["/a", "/b", "/c"]}), json!(["tenant", true, null]),
        "3B67F777541374F849FC7793DE5DF9150E711127C5B5A8E4726AC6DD306A3E59378867E4430E67857ACE5C908374FE16")] // V = ["tenant", True, None]
    #[case::undefined_middle(json!({"paths": ["/a", "/b", "/c"]}), json!(["tenant", {}, -0.5]),
        "3B67F777541374F849FC7793DE5DF91511622DAA78F835834610ABE56EFF5CB504C8191FC18308BCB37FDA5DCC5C9768")] // V = ["tenant", NonePartitionKeyValue, -0.5]
    fn multi_hash_matches_the_python_sdk(
        #[case] def: Value,
        #[case] pk: Value,
        #[case] expected: &str,
    ) {
        let def = definition(def);
        assert_eq!(def.wire["kind"], "MultiHash");
        assert_eq!(effective_partition_key(&def, &pk), expected);
    }

    // A prefix of a hierarchical key is the range [EPK(prefix), EPK(prefix) + "FF").
    // Expected values from the Python SDK:
    //   d = PartitionKey(path=["/state", "/city", "/zipcode"], kind="MultiHash")
    //   d._get_epk_range_for_prefix_partition_key(["CA"])  → min, max below
    //   d._get_effective_partition_key_string(V)          → each item's EPK
    #[test]
    fn a_hierarchical_prefix_range_holds_exactly_the_keys_under_it() {
        let def = definition(json!({"paths": ["/state", "/city", "/zipcode"]}));
        let (min, max) = (
            "2F442D3F30B24D244283F3B36B4CB88B",
            "2F442D3F30B24D244283F3B36B4CB88BFF",
        );
        assert_eq!(effective_partition_key(&def, &json!(["CA"])), min);
        for (pk, expected, inside) in [
            (json!(["CA", "Oxnard", "93033"]), "2F442D3F30B24D244283F3B36B4CB88B3BCEFBDDC93E6B92BBF05E9CF21167293F3866B6199C2C6C89F7F0BAB7CCCA72", true), // V = ["CA", "Oxnard", "93033"]
            (json!(["CA", "Ojai", "93023"]), "2F442D3F30B24D244283F3B36B4CB88B3BBC15F73901E616A1B6B431FC9738B202606D39486AFD18C955997DF6276F25", true), // V = ["CA", "Ojai", "93023"]
            (json!(["CA", {}, {}]), "2F442D3F30B24D244283F3B36B4CB88B11622DAA78F835834610ABE56EFF5CB511622DAA78F835834610ABE56EFF5CB5", true), // V = ["CA", NonePartitionKeyValue, NonePartitionKeyValue]
            (json!(["WA", "Seattle", "98101"]), "0845FB119899DE50766A2C4CEFC2FA731FA1E63F928D920107C8D7720A70328B1A48015686B46E3387DC8A592CE8D2BB", false), // V = ["WA", "Seattle", "98101"]
        ] {
            let epk = effective_partition_key(&def, &pk);
            assert_eq!(epk, expected, "{pk}");
            assert_eq!(in_range(&epk, min, max), inside, "{pk}");
        }
    }

    // A level an item lacks is undefined, not null: two different keys.
    // PartitionKey(path=["/city", "/zipcode"], kind="MultiHash")
    //   ._get_effective_partition_key_string(["Vancouver", NonePartitionKeyValue]) and (["Vancouver", None])
    #[test]
    fn an_undefined_level_hashes_apart_from_null() {
        let def = definition(json!({"paths": ["/city", "/zipcode"]}));
        let item = def.key_of(json!({"city": "Vancouver"}).as_object().unwrap());
        let pk: Value = serde_json::from_str(&item).unwrap();
        assert_eq!(
            effective_partition_key(&def, &pk),
            "1CC3DC3B88C9BE3E028DE3D16601589E11622DAA78F835834610ABE56EFF5CB5"
        );
        assert_eq!(
            effective_partition_key(&def, &json!(["Vancouver", null])),
            "1CC3DC3B88C9BE3E028DE3D16601589E378867E4430E67857ACE5C908374FE16"
        );
    }

    // Expected values: PartitionKey(path="/pk", kind="Hash", version=1)
    //   ._get_effective_partition_key_string([V]).upper(), V in each row's
    // comment (Python's V1 is lower case; the service's and JavaScript's upper).
    // Where Python departs from the service (see the module docs) the row
    // says which expression stands in for it.
    #[rstest]
    #[case::ascii(json!(["a"]), "05C1D78593652C086200")] // V = "a"
    #[case::empty_string(json!([""]), "05C1CF33970FF80800")] // V = ""
    #[case::latin(json!(["héllo wörld"]), "05C1EF7159DB360869C4AA6D6D702178C4B7736D6500")] // V = "héllo wörld"
    #[case::zero(json!([0]), "05C1BF6DA11560058000")] // V = 0 (JavaScript drops the final 00 byte; .NET and Python write it)
    #[case::one(json!([1]), "05C1ED172B6B2605BFF0")] // V = 1
    #[case::minus_one(json!([-1]), "05C1D1A5BDDF9C054010")]
    // V = -1.0: Python hashes the int -1 as the u32 4294967295; JavaScript's hashV1PartitionKey([-1]) agrees with -1.0
    #[case::fraction(json!([1.5]), "05C1E9694167A805BFF8")] // V = 1.5
    #[case::huge(json!([1e300]), "05C1AB5FCFAF8005FE37F30F918103D738")] // V = 1e300
    #[case::bool_true(json!([true]), "05C1D7C5A903D803")] // V = True
    #[case::bool_false(json!([false]), "05C1DB857D857C02")] // V = False
    #[case::null(json!([null]), "05C1ED45D7475601")]
    // V = None gives 05C1ED45D74756 (no null marker); JavaScript's hashV1PartitionKey([null]) gives this
    #[case::undefined(json!([{}]), "05C1D529E345DC00")] // V = {}
    #[case::long_string(json!(["x".repeat(150)]), &format!("05C1DD45A3938C08{}00", "79".repeat(100)))] // V = "x" * 150
    #[case::long_emoji(json!(["😀".repeat(60)]), &format!("05C1DDEBD72DF008{}F1", "F1A09981".repeat(25)))] // V = "😀" * 50: the service keeps 100 UTF-16 units of the 60 emoji (Python counts 60 code points and keeps all)
    fn hash_v1_matches_the_sdks(#[case] pk: Value, #[case] expected: &str) {
        let def = definition(json!({"paths": ["/pk"], "kind": "Hash", "version": 1}));
        assert_eq!(effective_partition_key(&def, &pk), expected);
    }

    #[test]
    fn a_definition_without_a_version_hashes_with_version_1_and_no_key_is_the_minimum() {
        // As the service: version 1 unless asked (a hierarchical key is 2).
        let def = definition(json!({"paths": ["/pk"]}));
        let v1 = definition(json!({"paths": ["/pk"], "version": 1}));
        assert_eq!(
            effective_partition_key(&def, &json!(["a"])),
            effective_partition_key(&v1, &json!(["a"]))
        );
        let v2 = definition(json!({"paths": ["/pk"], "version": 2}));
        assert_eq!(
            effective_partition_key(&v2, &json!(["a"])),
            "3A5381E1114EB8D3FCC90795045B49B7"
        );
        let hierarchical = definition(json!({"paths": ["/a", "/b"], "kind": "MultiHash"}));
        assert_eq!(hierarchical.wire["version"], 2);
        let none = PartitionKeyDefinition::parse(None).unwrap();
        assert_eq!(effective_partition_key(&none, &json!([])), "");
    }

    #[test]
    fn items_keys_hash_as_the_sdks_values() {
        let def = hash_v2_def();
        let missing = def.key_of(json!({"id": "x"}).as_object().unwrap());
        let pk: Value = serde_json::from_str(&missing).unwrap();
        assert_eq!(
            effective_partition_key(&def, &pk),
            "11622DAA78F835834610ABE56EFF5CB5"
        );
    }

    #[test]
    fn v1_cuts_a_surrogate_pair_into_a_replacement_character() {
        let s = format!("a{}", "😀".repeat(50));
        let Value::String(t) = truncate_v1(&json!(s)) else {
            panic!()
        };
        assert_eq!(t, format!("a{}\u{FFFD}", "😀".repeat(49)));
    }

    #[rstest]
    #[case("", "", "FF", true)]
    #[case("3A5381E1114EB8D3FCC90795045B49B7", "", "FF", true)]
    #[case(
        "3A5381E1114EB8D3FCC90795045B49B7",
        "3A5381E1114EB8D3FCC90795045B49B7",
        "FF",
        true
    )]
    #[case(
        "3A5381E1114EB8D3FCC90795045B49B7",
        "",
        "3A5381E1114EB8D3FCC90795045B49B7",
        false
    )]
    #[case(
        "3A5381E1114EB8D3FCC90795045B49B7",
        "3a5381e1114eb8d3fcc90795045b49b7",
        "3A5381E1114EB8D3FCC90795045B49B8",
        true
    )]
    #[case("3A", "3A5381E1114EB8D3FCC90795045B49B7", "FF", false)]
    #[case("9F", "", "A0", true)]
    #[case("A0", "", "a0", false)]
    #[case("", "", "", false)]
    fn in_range_orders_hex_strings(
        #[case] epk: &str,
        #[case] min: &str,
        #[case] max: &str,
        #[case] expected: bool,
    ) {
        assert_eq!(in_range(epk, min, max), expected);
    }

    fn json_component() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("JSON numbers are finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".*".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".*", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn v2_single_hash_is_32_upper_hex_digits_below_40(component in json_component()) {
            let epk = effective_partition_key(&hash_v2_def(), &Value::Array(vec![component]));
            prop_assert_eq!(epk.len(), 32);
            prop_assert!(epk.bytes().all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'F')));
            prop_assert!(in_range(&epk, "", "40"));
        }

        #[test]
        fn no_component_panics_in_any_scheme(components in prop::collection::vec(json_component(), 0..4)) {
            let pk = Value::Array(components);
            for def in [
                json!({"paths": ["/pk"], "kind": "Hash", "version": 1}),
                json!({"paths": ["/a", "/b", "/c"], "kind": "MultiHash", "version": 2}),
            ] {
                let epk = effective_partition_key(&definition(def), &pk);
                prop_assert!(in_range(&epk, "", "FF"));
            }
        }
    }
}
