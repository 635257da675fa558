//! Which values a container's indexing policy indexes. Of the included
//! and excluded paths that match a property's path, the most specific
//! decides: the longer one, and of two as long, the one ending in `?`
//! (the value itself) over `*` (everything below); the service resolves
//! overlapping paths this way ("Include or exclude strategy" in the
//! indexing policy documentation). An excluded path wins a tie.

use serde_json::Value;

use super::is_mode_none;
use crate::data::index::DocumentPath;

/// Whether `policy` (normalised) indexes the value at `steps`, the
/// property names from the document's root (`/address/city/?` for
/// `["address", "city"]`). Under `indexingMode: none`, nothing is.
pub fn indexes(policy: &Value, steps: &[Box<str>]) -> bool {
    if is_mode_none(policy) {
        return false;
    }
    // "The system property id and _ts are always indexed when the cosmos
    // account indexing mode is Consistent" (the same documentation).
    if let [only] = steps {
        if matches!(&**only, "id" | "_ts") {
            return true;
        }
    }
    let best = |field: &str| {
        policy[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| specificity(entry["path"].as_str()?, steps))
            .max()
    };
    match (best("includedPaths"), best("excludedPaths")) {
        (Some(included), Some(excluded)) => included > excluded,
        (included, _) => included.is_some(),
    }
}

/// The properties the policy's `spatialIndexes` name (`/location/*` is
/// `["location"]`), those it indexes: what the spatial index keeps
/// (`data/query/spatial_column.rs`). Paths through array elements are left out.
pub fn spatial_paths(policy: &Value) -> Vec<DocumentPath> {
    let mut paths: Vec<DocumentPath> = policy["spatialIndexes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| parse(entry["path"].as_str()?))
        .map(|(labels, _)| labels)
        .filter(|labels| !labels.is_empty() && !labels.contains(&"[]"))
        .map(|labels| labels.into_iter().collect::<DocumentPath>())
        .filter(|path| indexes(policy, path))
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// How specifically `pattern` matches `steps`: (labels, ends in `?`), or
/// `None` if it does not match them.
fn specificity(pattern: &str, steps: &[Box<str>]) -> Option<(usize, bool)> {
    let (labels, terminal) = parse(pattern)?;
    let matches = match terminal {
        '?' => labels.len() == steps.len(),
        _ => labels.len() <= steps.len(),
    } && labels
        .iter()
        .zip(steps)
        .all(|(label, step)| **label == **step);
    matches.then_some((labels.len(), terminal == '?'))
}

/// A path `/a/"b c"/[]/?` as its labels (`[]` kept as such: it names no
/// property) and its terminal `?` or `*`.
fn parse(pattern: &str) -> Option<(Vec<&str>, char)> {
    let mut rest = pattern.strip_prefix('/')?;
    let mut labels = Vec::new();
    loop {
        match rest {
            "?" => return Some((labels, '?')),
            "*" => return Some((labels, '*')),
            _ => {}
        }
        let (label, tail) = match rest.strip_prefix('"') {
            Some(quoted) => {
                let close = quoted.find('"')?;
                (&quoted[..close], quoted[close + 1..].strip_prefix('/')?)
            }
            None => rest.split_once('/')?,
        };
        labels.push(label);
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(included: &[&str], excluded: &[&str]) -> Value {
        let paths = |list: &[&str]| {
            list.iter()
                .map(|p| json!({ "path": p }))
                .collect::<Vec<_>>()
        };
        json!({
            "indexingMode": "consistent",
            "includedPaths": paths(included),
            "excludedPaths": paths(excluded),
        })
    }

    fn steps(path: &str) -> DocumentPath {
        path.split('.').collect()
    }

    #[rstest::rstest]
    #[case::default(&["/*"], &["/\"_etag\"/?"], "a.b", true)]
    #[case::etag(&["/*"], &["/\"_etag\"/?"], "_etag", false)]
    #[case::excluded_below(&["/*"], &["/payload/*"], "payload", false)]
    #[case::excluded_deeper(&["/*"], &["/payload/*"], "payload.x", false)]
    #[case::sibling(&["/*"], &["/payload/*"], "pay", true)]
    #[case::only_some(&["/name/?", "/address/*"], &["/*"], "name", true)]
    #[case::only_some_below(&["/name/?", "/address/*"], &["/*"], "address.city", true)]
    #[case::only_some_other(&["/name/?", "/address/*"], &["/*"], "age", false)]
    #[case::value_not_below(&["/name/?"], &["/*"], "name.first", false)]
    #[case::longer_wins(&["/*", "/a/b/*"], &["/a/*"], "a.b.c", true)]
    #[case::value_beats_star(&["/a/?"], &["/*", "/a/*"], "a", true)]
    #[case::quoted(&["/*"], &["/\"a b\"/?"], "a b", false)]
    #[case::array_elements(&["/*"], &["/tags/[]/?"], "tags", true)]
    #[case::id_always(&["/name/?"], &["/*"], "id", true)]
    #[case::ts_always(&["/*"], &["/_ts/?"], "_ts", true)]
    fn the_most_specific_path_decides(
        #[case] included: &[&str],
        #[case] excluded: &[&str],
        #[case] path: &str,
        #[case] indexed: bool,
    ) {
        assert_eq!(indexes(&policy(included, excluded), &steps(path)), indexed);
    }

    #[test]
    fn spatial_indexes_name_their_properties() {
        let mut with_spatial = policy(&["/*"], &["/hidden/*"]);
        with_spatial["spatialIndexes"] = json!([
            {"path": "/location/*", "types": ["Point"]},
            {"path": "/\"a b\"/c/?", "types": ["Polygon"]},
            {"path": "/hidden/*", "types": ["Point"]},
            {"path": "/places/[]/*", "types": ["Point"]},
            {"path": "/location/*", "types": ["Polygon"]}
        ]);
        assert_eq!(
            spatial_paths(&with_spatial),
            [steps("a b.c"), steps("location")]
        );
        assert!(spatial_paths(&policy(&["/*"], &[])).is_empty());
    }

    #[test]
    fn nothing_is_indexed_under_mode_none() {
        let none = json!({"indexingMode": "none", "includedPaths": [], "excludedPaths": []});
        assert!(!indexes(&none, &steps("a")));
    }
}
