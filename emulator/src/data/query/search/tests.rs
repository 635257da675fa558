//! Search queries end to end over documents given inline: each function,
//! the orders they give, what is refused, and the plans, run the way the
//! SDKs run them over several ranges (global statistics, component
//! queries, reciprocal rank fusion) to check they rank as one range does.

use serde_json::{json, Value};

use super::super::tests::prepared;
use super::super::{PreparedQuery, QueryBody};
use super::nearest::Nearest;
use super::Policies;
use crate::data::index::search_policy::{FullTextPolicy, VectorEmbeddingPolicy};
use crate::data::query::Setting;

fn run(query: &str, docs: &[Value]) -> Vec<Value> {
    prepared(query).run_values(docs.iter().cloned()).unwrap()
}

/// [`run`] in a container with `policies`.
fn run_with(policies: Policies, query: &str, docs: &[Value]) -> Vec<Value> {
    let setting = Setting {
        policies: policies.into(),
        udfs: None,
    };
    prepared(query)
        .run_values_in(setting, docs.iter().cloned())
        .unwrap()
}

fn refusal(query: &str) -> String {
    PreparedQuery::prepare(&QueryBody {
        query: query.into(),
        parameters: vec![],
    })
    .unwrap_err()
    .message
}

/// The `id`s of the results, in order.
fn ids(results: &[Value]) -> Vec<&str> {
    results.iter().map(|r| r["id"].as_str().unwrap()).collect()
}

fn euclidean_policy() -> Policies {
    Policies {
        vectors: VectorEmbeddingPolicy::parse(Some(&json!({"vectorEmbeddings": [
            {"path": "/v", "dataType": "float32", "dimensions": 2, "distanceFunction": "euclidean"}
        ]})))
        .unwrap(),
        full_text: FullTextPolicy::default(),
    }
}

fn vectors() -> Vec<Value> {
    vec![
        json!({"id": "east", "v": [1.0, 0.0]}),
        json!({"id": "far-east", "v": [10.0, 0.0]}),
        json!({"id": "north", "v": [0.0, 1.0]}),
        json!({"id": "west", "v": [-1.0, 0.0]}),
        json!({"id": "none"}),
    ]
}

#[test]
fn vector_distance_scores_by_the_policy_or_the_options() {
    let q = "SELECT VALUE VectorDistance(c.v, [2, 0]) FROM c WHERE c.id = 'far-east'";
    // No policy: cosine.
    assert_eq!(run(q, &vectors()), [json!(1.0)]);
    // The path's embedding policy: Euclidean.
    assert_eq!(run_with(euclidean_policy(), q, &vectors()), [json!(8.0)]);
    // The options win over the policy.
    let q = "SELECT VALUE VectorDistance(c.v, [2, 0], false, {'distanceFunction': 'DotProduct'}) \
             FROM c WHERE c.id = 'far-east'";
    assert_eq!(run_with(euclidean_policy(), q, &vectors()), [json!(20.0)]);
    // No vector at the path, or another length: undefined.
    let q =
        "SELECT c.id, VectorDistance(c.v, [1, 2, 3]) AS d FROM c WHERE c.id IN ('none', 'east')";
    assert_eq!(
        run(q, &vectors()),
        [json!({"id": "east"}), json!({"id": "none"})]
    );
}

#[test]
fn order_by_vector_distance_puts_the_most_similar_first() {
    // Cosine: greater first; ties (east and far-east point the same way)
    // keep the items' order.
    let q = "SELECT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])";
    assert_eq!(ids(&run(q, &vectors())), ["east", "far-east", "north"]);
    // Euclidean (the policy): smaller first.
    let ranked = run_with(euclidean_policy(), q, &vectors());
    assert_eq!(ids(&ranked), ["east", "north", "west"]);
    // The document may be either argument; OFFSET LIMIT pages the order.
    let q = "SELECT c.id FROM c ORDER BY VectorDistance([1, 0.1], c.v, true, {distanceFunction: 'euclidean'}) \
             OFFSET 1 LIMIT 2";
    assert_eq!(ids(&run(q, &vectors())), ["north", "west"]);
    // An item without the vector comes last.
    let q = "SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])";
    assert_eq!(ids(&run(q, &vectors())).last(), Some(&"none"));
}

#[test]
fn vector_search_refusals_name_what_to_change() {
    for direction in ["ASC", "DESC"] {
        let message = refusal(&format!(
            "SELECT TOP 1 c.id FROM c ORDER BY VectorDistance(c.v, [1, 0]) {direction}"
        ));
        assert!(
            message.contains(
                "Specifying a sorting order (ASC or DESC) with VectorDistance function is not supported."
            ),
            "{message}"
        );
    }
    assert!(refusal("SELECT VectorDistance(c.v) FROM c").contains("2 to 4 arguments"));
    assert!(refusal(
        "SELECT VectorDistance(c.v, [1], false, {'distanceFunction': 'manhattan'}) FROM c"
    )
    .contains("Invalid distanceFunction"));
    assert!(
        refusal("SELECT VectorDistance(c.v, [1], false, {'dataType': 'float64'}) FROM c")
            .contains("Invalid dataType")
    );
}

fn texts() -> Vec<Value> {
    vec![
        json!({"id": "1", "text": "The runner was running in the United States."}),
        json!({"id": "2", "text": "Runs and runs: a long text about runs, walks and many other things to do."}),
        json!({"id": "3", "text": "A quiet walk in the United Kingdom."}),
        json!({"id": "4", "text": "States of matter."}),
        json!({"id": "5", "text": 42}),
        json!({"id": "6"}),
    ]
}

#[test]
fn full_text_contains_matches_stemmed_words_and_phrases() {
    let matching = |condition: &str| {
        ids(&run(
            &format!("SELECT c.id FROM c WHERE {condition}"),
            &texts(),
        ))
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>()
    };
    assert_eq!(matching("FullTextContains(c.text, 'run')"), ["1", "2"]);
    assert_eq!(matching("FullTextContains(c.text, 'RUNNERS')"), ["1"]);
    // A phrase: its words in order.
    assert_eq!(matching("FullTextContains(c.text, 'united states')"), ["1"]);
    assert_eq!(
        matching("FullTextContainsAll(c.text, 'walk', 'united')"),
        ["3"]
    );
    assert_eq!(
        matching("FullTextContainsAny(c.text, 'walk', 'matter')"),
        ["2", "3", "4"]
    );
    // Not a text: undefined, never true, and NOT of it neither.
    assert_eq!(matching("NOT FullTextContains(c.text, 'run')"), ["3", "4"]);
}

#[test]
fn full_text_score_ranks_by_bm25_over_every_document() {
    let q = "SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, 'run')";
    // 1 has one "run" in a short text; 2 has four in a long one: more
    // occurrences win, with diminishing returns; the rest score nothing.
    assert_eq!(ids(&run(q, &texts()))[..2], ["2", "1"]);
    // Statistics count every document, not only those the filter keeps:
    // the order is the same with a WHERE clause.
    let q = "SELECT c.id FROM c WHERE FullTextContains(c.text, 'run') \
             ORDER BY RANK FullTextScore(c.text, 'run', 'walk')";
    assert_eq!(ids(&run(q, &texts())), ["2", "1"]);
    // TOP and OFFSET LIMIT take from the ranked results.
    let q = "SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, ['united states']) OFFSET 0 LIMIT 1";
    assert_eq!(ids(&run(q, &texts())), ["1"]);
}

#[test]
fn rrf_fuses_ranks_with_weights() {
    let docs = [
        json!({"id": "a", "text": "run run run", "v": [0.0, 1.0]}),
        json!({"id": "b", "text": "run", "v": [1.0, 0.0]}),
        json!({"id": "c", "text": "walk", "v": [0.9, 0.1]}),
    ];
    // Text ranks a, b, c; vector ranks b, c, a: b is best overall.
    let q = "SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'run'), VectorDistance(c.v, [1, 0]))";
    assert_eq!(run(q, &docs), [json!("b"), json!("a"), json!("c")]);
    // A heavy text weight puts a first; a negative one reverses the text ranks.
    let q = "SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'run'), VectorDistance(c.v, [1, 0]), [10, 1])";
    assert_eq!(run(q, &docs)[0], json!("a"));
    let q = "SELECT VALUE c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'run'), VectorDistance(c.v, [1, 0]), [-2, 1])";
    assert_eq!(run(q, &docs)[0], json!("c"));
}

#[test]
fn search_refusals_name_the_rule() {
    let cases = [
        (
            "SELECT FullTextScore(c.text, 'x') AS s FROM c",
            "only allowed in an ORDER BY RANK clause",
        ),
        (
            "SELECT c.id FROM c WHERE FullTextScore(c.text, 'x') > 1",
            "only allowed in an ORDER BY RANK clause",
        ),
        (
            "SELECT c.id FROM c ORDER BY FullTextScore(c.text, 'x')",
            "only allowed in an ORDER BY RANK clause",
        ),
        (
            "SELECT RRF(FullTextScore(c.text, 'x'), FullTextScore(c.text, 'y')) FROM c",
            "The RRF function is only allowed in an ORDER BY RANK clause.",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.text, 'x') DESC",
            "Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed.",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'x'), FullTextScore(c.t, 'y'), [1])",
            "2 scoring functions but 1 weights",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'x'), FullTextScore(c.t, 'y'), [1, 1, 1])",
            "2 scoring functions but 3 weights",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK c.n",
            "ORDER BY RANK takes a scoring function",
        ),
        // The plans' internal forms are no ranks.
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK _FullTextScore()",
            "ORDER BY RANK takes a scoring function",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK RRF(_VectorScore(c.v, [1]), FullTextScore(c.t, 'x'))",
            "RRF takes scoring functions",
        ),
        (
            "SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.t, c.word)",
            "string literals",
        ),
        (
            "SELECT c.index, RRF(VectorDistance(c.vector, [1,2,3]), FullTextScore(c.text, 'test') FROM c",
            "Syntax error, incorrect syntax near 'FROM'",
        ),
        (
            "SELECT c.id FROM c WHERE FullTextContains(c.text)",
            "at least one search term",
        ),
    ];
    for (query, expected) in cases {
        let message = refusal(query);
        assert!(message.contains(expected), "{query}: {message}");
    }
    // RANK alone is a name.
    assert_eq!(
        run(
            "SELECT VALUE c.rank FROM c ORDER BY c.rank",
            &[json!({"rank": 2}), json!({"rank": 1})]
        ),
        [json!(1), json!(2)]
    );
}

#[test]
fn countif_counts_the_rows_where_it_is_true() {
    let q = "SELECT COUNT(1) AS n, COUNTIF(FullTextContains(c.text, 'run')) AS runs FROM c";
    assert_eq!(run(q, &texts()), [json!({"n": 6, "runs": 2})]);
}

/// Runs `query` as an SDK does with the gateway's plan, over `ranges`
/// (the documents of each range), and returns the final rows.
fn run_as_sdk(query: &str, ranges: &[Vec<Value>]) -> Vec<Value> {
    let plan = prepared(query).plan().unwrap();
    let info = &plan["hybridSearchQueryInfo"];
    assert!(plan["queryInfo"].is_null(), "{plan}");
    let fill = |text: &str, stats: &Value| {
        let mut text = text
            .replace("{documentdb-formattableorderbyquery-filter}", "true")
            .replace(
                "{documentdb-formattablehybridsearchquery-totaldocumentcount}",
                &stats["documentCount"].to_string(),
            );
        let full_text = stats["fullTextStatistics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let components = info["componentQueryInfos"].as_array().unwrap().len();
        let mut next = full_text.iter();
        for i in 0..components {
            let words = format!("{{documentdb-formattablehybridsearchquery-totalwordcount-{i}}}");
            if text.contains(&words) {
                let s = next.next().unwrap();
                text = text
                    .replace(&words, &s["totalWordCount"].to_string())
                    .replace(
                        &format!("{{documentdb-formattablehybridsearchquery-hitcountsarray-{i}}}"),
                        &s["hitCounts"].to_string(),
                    );
            }
        }
        text
    };
    // 1. Global statistics, summed over the ranges.
    let mut stats = json!({"documentCount": 0, "fullTextStatistics": []});
    if info["requiresGlobalStatistics"] == json!(true) {
        for docs in ranges {
            let q = info["globalStatisticsQuery"].as_str().unwrap();
            let part = &run(q, docs)[0];
            stats["documentCount"] = json!(
                stats["documentCount"].as_u64().unwrap() + part["documentCount"].as_u64().unwrap()
            );
            if stats["fullTextStatistics"].as_array().unwrap().is_empty() {
                stats["fullTextStatistics"] = part["fullTextStatistics"].clone();
            } else {
                for (all, one) in stats["fullTextStatistics"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .zip(part["fullTextStatistics"].as_array().unwrap())
                {
                    all["totalWordCount"] = json!(
                        all["totalWordCount"].as_u64().unwrap()
                            + one["totalWordCount"].as_u64().unwrap()
                    );
                    let hits: Vec<u64> = all["hitCounts"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .zip(one["hitCounts"].as_array().unwrap())
                        .map(|(a, b)| a.as_u64().unwrap() + b.as_u64().unwrap())
                        .collect();
                    all["hitCounts"] = json!(hits);
                }
            }
        }
    }
    // 2. Each component query on each range, rows coalesced by _rid.
    let mut rows: Vec<Value> = Vec::new();
    for component in info["componentQueryInfos"].as_array().unwrap() {
        let q = fill(component["rewrittenQuery"].as_str().unwrap(), &stats);
        for docs in ranges {
            for row in run(&q, docs) {
                if !rows.iter().any(|r| r["_rid"] == row["_rid"]) {
                    rows.push(row);
                }
            }
        }
    }
    // 3. Reciprocal rank fusion, as the Python SDK computes it.
    rows.sort_by(|a, b| a["_rid"].as_str().cmp(&b["_rid"].as_str()));
    let infos = info["componentQueryInfos"].as_array().unwrap();
    let weights: Vec<f64> = match info["componentWeights"].as_array() {
        Some(w) if !w.is_empty() => w.iter().map(|x| x.as_f64().unwrap()).collect(),
        _ => vec![1.0; infos.len()],
    };
    let mut scores = vec![0.0; rows.len()];
    for (i, component) in infos.iter().enumerate() {
        let descending = component["orderBy"][0] != "Ascending";
        let mut order: Vec<(f64, usize)> = rows
            .iter()
            .enumerate()
            .map(|(r, row)| (row["payload"]["componentScores"][i].as_f64().unwrap(), r))
            .collect();
        order.sort_by(|a, b| {
            let o = a.0.partial_cmp(&b.0).unwrap();
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        let mut rank = 0;
        for (k, (score, r)) in order.iter().enumerate() {
            if k == 0 || *score != order[k - 1].0 {
                rank += 1;
            }
            scores[*r] += weights[i] / (60.0 + rank as f64);
        }
    }
    let mut ranked: Vec<(f64, Value)> = scores.into_iter().zip(rows).collect();
    ranked.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    let skip = info["skip"].as_u64().unwrap_or(0) as usize;
    let take = info["take"].as_u64().map_or(usize::MAX, |t| t as usize);
    ranked
        .into_iter()
        .skip(skip)
        .take(take)
        .map(|(_, row)| row["payload"]["payload"].clone())
        .collect()
}

/// 40 documents with text and a vector, and their `_rid`s in key order.
fn corpus() -> Vec<Value> {
    let words = ["river", "stone", "run", "light", "walk", "united", "states"];
    (0..40)
        .map(|i: usize| {
            let text: Vec<&str> = (0..(3 + i % 5))
                .map(|k| words[(i * 7 + k * 3) % words.len()])
                .collect();
            json!({
                "id": format!("{i:02}"),
                "_rid": format!("rid{i:02}"),
                "text": text.join(" "),
                "v": [((i * 13) % 7) as f64, ((i * 5) % 11) as f64, 1.0],
            })
        })
        .collect()
}

#[test]
fn hybrid_plans_rank_across_ranges_as_one_range_does() {
    let queries = [
        "SELECT TOP 5 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'run', 'stone'), VectorDistance(c.v, [1, 2, 3]))",
        "SELECT c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [3, 1, 0]), FullTextScore(c.text, 'united states'), [2, -0.5]) OFFSET 2 LIMIT 6",
        "SELECT TOP 7 c.id FROM c WHERE FullTextContainsAny(c.text, 'river', 'light') ORDER BY RANK FullTextScore(c.text, 'river', 'light')",
        "SELECT TOP 4 * FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'walk'), FullTextScore(c.text, 'river'))",
        // Unbounded: every row of every range is a candidate.
        "SELECT c.id FROM c WHERE FullTextContains(c.text, 'river') ORDER BY RANK RRF(FullTextScore(c.text, 'river'), FullTextScore(c.text, 'light'))",
    ];
    let docs = corpus();
    for query in queries {
        let direct = run(query, &docs);
        // One range, and four of every fourth document.
        let one = run_as_sdk(query, std::slice::from_ref(&docs));
        let four: Vec<Vec<Value>> = (0..4)
            .map(|r| docs.iter().skip(r).step_by(4).cloned().collect())
            .collect();
        let split = run_as_sdk(query, &four);
        assert!(!direct.is_empty(), "{query}");
        assert_eq!(one, direct, "{query}: one range through the plan");
        assert_eq!(split, direct, "{query}: four ranges through the plan");
    }
}

#[test]
fn hybrid_plans_have_the_shape_the_sdks_read() {
    let plan = prepared(
        "SELECT TOP 10 c.title FROM c WHERE c.n > 1 ORDER BY RANK RRF(FullTextScore(c.text, 'swim', 'run'), VectorDistance(c.image, [1, 2, 3]), [1, -0.3])",
    )
    .plan()
    .unwrap();
    let info = &plan["hybridSearchQueryInfo"];
    assert_eq!(
        info["globalStatisticsQuery"],
        "SELECT COUNT(1) AS documentCount, [{\"totalWordCount\": SUM(_FullTextWordCount(c.text)), \
         \"hitCounts\": [COUNTIF(FullTextContains(c.text, \"swim\")), COUNTIF(FullTextContains(c.text, \"run\"))]}] \
         AS fullTextStatistics FROM c"
    );
    assert_eq!(info["take"], 10);
    assert_eq!(info["skip"], Value::Null);
    assert_eq!(info["componentWeights"], json!([1.0, 0.3]));
    assert_eq!(info["requiresGlobalStatistics"], true);
    let components = info["componentQueryInfos"].as_array().unwrap();
    assert_eq!(components[0]["orderBy"], json!(["Descending"]));
    // A negative weight reverses the component's order.
    assert_eq!(components[1]["orderBy"], json!(["Ascending"]));
    assert_eq!(components[0]["top"], 120);
    assert_eq!(components[1]["hasNonStreamingOrderBy"], true);
    let rewritten = components[0]["rewrittenQuery"].as_str().unwrap();
    assert!(rewritten.starts_with("SELECT TOP 120 c._rid, [{\"item\": _FullTextScore(c.text, [\"swim\",\"run\"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, {documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})}] AS orderByItems, {\"payload\": {\"title\": c.title}, \"componentScores\": ["), "{rewritten}");
    assert!(
        rewritten.contains("WHERE ((c.n > 1) AND ({documentdb-formattableorderbyquery-filter}))"),
        "{rewritten}"
    );
    assert!(
        rewritten.contains("(_VectorScore(c.image, [1, 2, 3]) ?? 1.79769e+308)"),
        "{rewritten}"
    );
    // Without TOP or LIMIT: no take, and no TOP on the components.
    let plan = prepared(
        "SELECT c.title FROM c ORDER BY RANK RRF(FullTextScore(c.text, 'swim'), FullTextScore(c.title, 'run'))",
    )
    .plan()
    .unwrap();
    let info = &plan["hybridSearchQueryInfo"];
    assert_eq!((&info["take"], &info["skip"]), (&Value::Null, &Value::Null));
    for component in info["componentQueryInfos"].as_array().unwrap() {
        assert_eq!(component["top"], Value::Null);
        let rewritten = component["rewrittenQuery"].as_str().unwrap();
        assert!(rewritten.starts_with("SELECT c._rid, "), "{rewritten}");
    }
}

#[test]
fn vector_plans_sort_in_memory_in_the_policys_direction() {
    let q = "SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 2]) OFFSET 5 LIMIT 7";
    let plan = prepared(q).plan().unwrap();
    let info = &plan["queryInfo"];
    assert_eq!(info["hasNonStreamingOrderBy"], true);
    assert_eq!(info["orderBy"], json!(["Descending"]));
    assert_eq!(
        (info["offset"].clone(), info["limit"].clone()),
        (json!(5), json!(7))
    );
    let rewritten = info["rewrittenQuery"].as_str().unwrap();
    assert!(
        rewritten.ends_with("ORDER BY VECTORDISTANCE(c.v, [1, 2]) OFFSET 0 LIMIT 12"),
        "{rewritten}"
    );
    // Euclidean by the policy: ascending distances.
    let plan = prepared(q)
        .plan_for(Some("NonValueAggregate"), &euclidean_policy())
        .unwrap();
    assert_eq!(plan["queryInfo"]["orderBy"], json!(["Ascending"]));
    // Each range's rewritten query returns its rows in that order.
    let text = plan["queryInfo"]["rewrittenQuery"]
        .as_str()
        .unwrap()
        .replace("{documentdb-formattableorderbyquery-filter}", "true");
    let rows = run_with(euclidean_policy(), &text, &vectors());
    let items: Vec<f64> = rows
        .iter()
        .filter_map(|r| r["orderByItems"][0]["item"].as_f64())
        .collect();
    assert!(items.windows(2).all(|w| w[0] <= w[1]), "{items:?}");
}

#[test]
fn queries_the_column_cannot_answer_take_the_scan() {
    let shape = |q: &str| {
        let query = PreparedQuery::prepare(&QueryBody {
            query: q.into(),
            parameters: vec![],
        })
        .unwrap();
        Nearest::of(&query.select, &Policies::default()).is_some()
    };
    assert!(shape(
        "SELECT TOP 3 * FROM c ORDER BY VectorDistance(c.v, [1, 2])"
    ));
    // No bound, a JOIN, DISTINCT, a vector read from the document, options
    // that are not constant: the scan.
    assert!(!shape(
        "SELECT * FROM c ORDER BY VectorDistance(c.v, [1, 2])"
    ));
    assert!(!shape(
        "SELECT TOP 3 c.id FROM c JOIN t IN c.tags ORDER BY VectorDistance(c.v, [1, 2])"
    ));
    assert!(!shape(
        "SELECT DISTINCT TOP 3 c.id FROM c ORDER BY VectorDistance(c.v, [1, 2])"
    ));
    assert!(!shape(
        "SELECT TOP 3 * FROM c ORDER BY VectorDistance(c.v, c.w)"
    ));
    assert!(!shape(
        "SELECT TOP 3 * FROM c ORDER BY VectorDistance(c.v, [1, 2], false, {'distanceFunction': c.f})"
    ));
    assert!(!shape("SELECT TOP 3 * FROM c ORDER BY c.x"));
}
