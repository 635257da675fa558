//! Vector and full-text search on a fresh emulator: top-10 by
//! `VectorDistance` over 10k and 100k items of 1,536 dimensions (with and
//! without a filter), the memory a vector item costs, and a full-text
//! top-10 by `FullTextScore` over 100k short documents.
//!
//! Vectors: item `seq` holds [`vector`]`(seq)`, 1,536 values in [-1, 1)
//! with four decimals, under `/embedding` (a cosine float32 embedding
//! policy); each query's vector is another of the generator's. Every answer
//! is checked against the exact ranking the bench computes itself (in
//! double precision: the top ten of random vectors are far apart beside a
//! float32 rounding).
//!
//! Texts: item `seq` holds twelve words `t0000`..`t0999`, drawn so that
//! low numbers are common ([`words`]); a word is its own stem in every
//! language. The answer's scores, recomputed here by BM25 (k1 1.2, b 0.75,
//! Lucene's idf, as documented), must be the ten best (ties in any order).
//!
//! Each query is sent as plain REST to the container's one range (no
//! query plan), one untimed run then [`QUERY_ROUNDS`] timed.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Value};

use crate::connection::{Connection, Endpoint};
use crate::cosmos::{query_body, Signer};
use crate::documents::{group, id, partition};
use crate::figures::{count, mib};
use crate::load::Counted;
use crate::measure::dataset::{self, DATABASE};
use crate::measure::query;
use crate::measure::send_once;
use crate::process::ServerProcess;
use crate::stats::median;
use crate::targets::Target;

pub const DIMENSIONS: usize = 1536;
/// Vector items the queries run over, loaded in turn.
pub const VECTOR_SIZES: [usize; 2] = [10_000, 100_000];
/// Short documents the full-text queries run over.
pub const TEXT_ITEMS: usize = 100_000;
/// Words per document, and the vocabulary they come from.
const WORDS_PER_TEXT: usize = 12;
const VOCABULARY: usize = 1000;
/// Timed runs of each query, after an untimed one.
pub const QUERY_ROUNDS: usize = 7;
/// The longest one run may take before the measurement gives up.
const RUN_LIMIT: Duration = Duration::from_secs(120);

const VECTORS: &str = "vectors";
const TEXTS: &str = "texts";

/// The vector queries; `@v` is a vector of the generator.
pub const VECTOR_QUERIES: [&str; 2] = [
    "SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.embedding, @v)",
    "SELECT TOP 10 c.id FROM c WHERE c.grp = 3 ORDER BY VectorDistance(c.embedding, @v)",
];

/// The full-text query; `@v` is two words of middling frequency, others
/// each run (the same query twice would be answered from the result cache).
pub const TEXT_QUERY: &str = "SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, @v)";

/// The search terms of run `round`.
fn text_terms(round: usize) -> [String; 2] {
    [
        format!("t{:04}", 100 + 7 * round),
        format!("t{:04}", 350 + 11 * round),
    ]
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryRow {
    pub items: usize,
    pub query: String,
    pub runs_ms: Vec<f64>,
    pub median_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct VectorSize {
    pub items: usize,
    /// Creating the items since the previous size.
    pub load: Counted,
    pub rss_bytes: u64,
    /// (RSS − RSS of the empty container) / items.
    pub bytes_per_item: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    pub dimensions: usize,
    /// The JSON of one vector item, as sent.
    pub vector_item_bytes: usize,
    pub vector_sizes: Vec<VectorSize>,
    pub vector_queries: Vec<QueryRow>,
    pub text_items: usize,
    pub text_load: Counted,
    pub text_query: QueryRow,
}

pub async fn measure(
    target: &Target,
    key: &str,
    mut progress: impl FnMut(String),
) -> Result<SearchResults, String> {
    let process = ServerProcess::spawn(target.command())?;
    let endpoint = Endpoint::parse(&process.url)?;
    let signer = Signer::new(key, &endpoint.authority())?;
    if let Err(e) = send_once(&endpoint, signer.create_database(DATABASE)).await {
        if !e.contains("409") {
            return Err(format!("creating the database: {e}"));
        }
    }
    create(&endpoint, &signer, vector_container()).await?;
    let empty_rss = process.rss()?;
    let mut connection = Connection::open(&endpoint)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", endpoint.url()))?;
    let mut vector_sizes = Vec::new();
    let mut vector_queries = Vec::new();
    let mut loaded = 0;
    for items in VECTOR_SIZES {
        let load =
            dataset::create_items(&endpoint, &signer, VECTORS, loaded..items, 8, vector_item)
                .await?;
        loaded = items;
        let rss_bytes = process.rss()?;
        let size = VectorSize {
            items,
            bytes_per_item: rss_bytes.saturating_sub(empty_rss) as f64 / items as f64,
            rss_bytes,
            load,
        };
        progress(format!(
            "{} vector items loaded at {} items/s; RSS {} ({} per item)",
            count(items as f64),
            count(size.load.per_second),
            mib(rss_bytes),
            bytes(size.bytes_per_item)
        ));
        vector_sizes.push(size);
        for (i, sql) in VECTOR_QUERIES.into_iter().enumerate() {
            let query = |round: usize| vector(QUERY_SEED + round as u64);
            let filter = |seq: usize| i == 0 || group(seq) == 3;
            let row = timed(
                (&mut connection, &signer, VECTORS),
                (items, sql),
                |round| json!(query(round)),
                |round, ids| check_nearest(ids, &query(round), items, filter),
            )
            .await
            .map_err(|e| format!("`{sql}` over {items} items: {e}"))?;
            progress(query_line(&row));
            vector_queries.push(row);
        }
    }

    create(&endpoint, &signer, text_container()).await?;
    let text_load =
        dataset::create_items(&endpoint, &signer, TEXTS, 0..TEXT_ITEMS, 8, text_item).await?;
    progress(format!(
        "{} texts loaded at {} items/s",
        count(TEXT_ITEMS as f64),
        count(text_load.per_second)
    ));
    let texts: Vec<Vec<String>> = (0..TEXT_ITEMS).map(words).collect();
    let text_query = timed(
        (&mut connection, &signer, TEXTS),
        (TEXT_ITEMS, TEXT_QUERY),
        |round| json!(text_terms(round)),
        |round, ids| check_text(ids, &best_text_scores(&texts, &text_terms(round))),
    )
    .await
    .map_err(|e| format!("`{TEXT_QUERY}`: {e}"))?;
    progress(query_line(&text_query));
    Ok(SearchResults {
        dimensions: DIMENSIONS,
        vector_item_bytes: vector_item(0).len(),
        vector_sizes,
        vector_queries,
        text_items: TEXT_ITEMS,
        text_load,
        text_query,
    })
}

/// Where the query vectors start in the generator (past every item).
const QUERY_SEED: u64 = 1 << 40;

/// The vector of item `seq` (or of a query): uniform in [-1, 1), four
/// decimals, as the item's JSON holds it.
pub fn vector(seq: u64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seq);
    (0..DIMENSIONS)
        .map(|_| f64::from(rng.i32(-10_000..10_000)) / 10_000.0)
        .collect()
}

/// The words of text `seq`: word k is `t` and four digits, k drawn as
/// ⌊1000 u³⌋ for uniform u (low numbers common, high ones rare).
pub fn words(seq: usize) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(seq as u64 ^ 0x7e57);
    (0..WORDS_PER_TEXT)
        .map(|_| {
            let u = rng.f64();
            let k = ((VOCABULARY as f64) * u * u * u) as usize;
            format!("t{:04}", k.min(VOCABULARY - 1))
        })
        .collect()
}

fn vector_item(seq: usize) -> Bytes {
    let values: Vec<String> = vector(seq as u64).iter().map(|v| v.to_string()).collect();
    format!(
        "{{\"id\":\"{}\",\"pk\":\"{}\",\"seq\":{seq},\"grp\":{},\"embedding\":[{}]}}",
        id(seq),
        partition(seq),
        group(seq),
        values.join(",")
    )
    .into()
}

fn text_item(seq: usize) -> Bytes {
    json!({"id": id(seq), "pk": partition(seq), "seq": seq, "text": words(seq).join(" ")})
        .to_string()
        .into()
}

fn vector_container() -> Value {
    json!({
        "id": VECTORS,
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "vectorEmbeddingPolicy": {"vectorEmbeddings": [{
            "path": "/embedding", "dataType": "float32",
            "dimensions": DIMENSIONS, "distanceFunction": "cosine"
        }]},
        "indexingPolicy": {
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/embedding/*"}, {"path": "/\"_etag\"/?"}],
            "vectorIndexes": [{"path": "/embedding", "type": "quantizedFlat"}]
        }
    })
}

fn text_container() -> Value {
    json!({
        "id": TEXTS,
        "partitionKey": {"paths": ["/pk"], "kind": "Hash"},
        "fullTextPolicy": {
            "defaultLanguage": "en-US",
            "fullTextPaths": [{"path": "/text", "language": "en-US"}]
        },
        "indexingPolicy": {
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": "/\"_etag\"/?"}],
            "fullTextIndexes": [{"path": "/text"}]
        }
    })
}

async fn create(endpoint: &Endpoint, signer: &Signer, body: Value) -> Result<(), String> {
    send_once(endpoint, signer.create_container_from(DATABASE, &body))
        .await
        .map(drop)
        .map_err(|e| format!("creating {}: {e}", body["id"]))
}

/// Runs `sql` over `container` once untimed, then [`QUERY_ROUNDS`] times
/// timed, `@v` = `parameter(round)`; `check(round, ids)` judges each
/// answer (outside the timing).
async fn timed(
    (connection, signer, container): (&mut Connection, &Signer, &str),
    (items, sql): (usize, &str),
    parameter: impl Fn(usize) -> Value,
    check: impl Fn(usize, &[String]) -> Result<(), String>,
) -> Result<QueryRow, String> {
    let mut runs_ms = Vec::new();
    for round in 0..=QUERY_ROUNDS {
        let q = parameter(round);
        let started = Instant::now();
        let ids = tokio::time::timeout(RUN_LIMIT, query_ids(connection, signer, container, sql, q))
            .await
            .map_err(|_| format!("a run took longer than {RUN_LIMIT:?}"))??;
        if round > 0 {
            runs_ms.push(started.elapsed().as_secs_f64() * 1e3);
        }
        check(round, &ids)?;
    }
    Ok(QueryRow {
        items,
        query: sql.to_string(),
        median_ms: median(&runs_ms).unwrap_or(f64::NAN),
        runs_ms,
    })
}

/// The ids a query returns, every page read.
async fn query_ids(
    connection: &mut Connection,
    signer: &Signer,
    container: &str,
    sql: &str,
    q: Value,
) -> Result<Vec<String>, String> {
    let (documents, _) =
        query::all_pages(connection, signer, container, query_body(sql, q)).await?;
    documents
        .iter()
        .map(|d| {
            d["id"]
                .as_str()
                .map(String::from)
                .ok_or_else(|| "a result without id".into())
        })
        .collect()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

/// The answer is the ten items of `0..items` (those `filter` keeps) most
/// similar to `query`, most similar first.
fn check_nearest(
    ids: &[String],
    query: &[f64],
    items: usize,
    filter: impl Fn(usize) -> bool,
) -> Result<(), String> {
    let mut scored: Vec<(f64, usize)> = (0..items)
        .filter(|&seq| filter(seq))
        .map(|seq| (cosine(&vector(seq as u64), query), seq))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let expected: Vec<String> = scored.iter().take(10).map(|(_, seq)| id(*seq)).collect();
    match ids == expected {
        true => Ok(()),
        false => Err(format!("returned {ids:?}, expected {expected:?}")),
    }
}

/// The BM25 score of every text (`texts[seq]` is item `seq`'s words) for
/// `terms`, by id, and the ten best scores in descending order.
fn best_text_scores(texts: &[Vec<String>], terms: &[String]) -> (HashMap<String, f64>, Vec<f64>) {
    let n = texts.len() as f64;
    let average = texts.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let idf: Vec<f64> = terms
        .iter()
        .map(|term| {
            let hits = texts.iter().filter(|t| t.iter().any(|w| w == term)).count() as f64;
            (1.0 + (n - hits + 0.5) / (hits + 0.5)).ln()
        })
        .collect();
    let (k1, b) = (1.2, 0.75);
    let scores: HashMap<String, f64> = texts
        .iter()
        .enumerate()
        .map(|(seq, text)| {
            let length = 1.0 - b + b * text.len() as f64 / average;
            let score = terms
                .iter()
                .zip(&idf)
                .map(|(term, idf)| {
                    let tf = text.iter().filter(|w| *w == term).count() as f64;
                    idf * tf * (k1 + 1.0) / (tf + k1 * length)
                })
                .sum();
            (id(seq), score)
        })
        .collect();
    let mut best: Vec<f64> = scores.values().copied().collect();
    best.sort_by(|a, b| b.total_cmp(a));
    best.truncate(10);
    (scores, best)
}

/// The answer's scores are the ten best, in order (ties in any order).
fn check_text(
    ids: &[String],
    (scores, best): &(HashMap<String, f64>, Vec<f64>),
) -> Result<(), String> {
    let got: Vec<f64> = ids
        .iter()
        .map(|id| scores.get(id).copied().unwrap_or(-1.0))
        .collect();
    let close = got.len() == best.len()
        && got
            .iter()
            .zip(best)
            .all(|(g, b)| (g - b).abs() <= 1e-9 * b.abs().max(1.0));
    match close {
        true => Ok(()),
        false => Err(format!("returned scores {got:?}, expected {best:?}")),
    }
}

/// The progress line of a query row.
pub fn query_line(row: &QueryRow) -> String {
    format!(
        "`{}` over {} items: median {:.1} ms of {}",
        row.query,
        count(row.items as f64),
        row.median_ms,
        row.runs_ms.len()
    )
}

/// Bytes as B or KiB.
pub fn bytes(b: f64) -> String {
    if b >= 10_240.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_deterministic_and_in_range() {
        let v = vector(3);
        assert_eq!(v.len(), DIMENSIONS);
        assert_eq!(v, vector(3));
        assert_ne!(v, vector(4));
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        let item: Value = serde_json::from_slice(&vector_item(3)).unwrap();
        let stored: Vec<f64> = item["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(stored, v);
    }

    #[test]
    fn the_nearest_check_wants_the_exact_order() {
        let query = vector(QUERY_SEED);
        let mut scored: Vec<(f64, usize)> = (0..50)
            .map(|s| (cosine(&vector(s as u64), &query), s))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut ids: Vec<String> = scored.iter().take(10).map(|(_, s)| id(*s)).collect();
        assert!(check_nearest(&ids, &query, 50, |_| true).is_ok());
        ids.swap(0, 1);
        assert!(check_nearest(&ids, &query, 50, |_| true).is_err());
        // A filter changes the answer.
        let even: Vec<String> = scored
            .iter()
            .filter(|(_, s)| s % 2 == 0)
            .take(10)
            .map(|(_, s)| id(*s))
            .collect();
        assert!(check_nearest(&even, &query, 50, |s| s % 2 == 0).is_ok());
    }

    #[test]
    fn text_scores_reward_rare_words_and_the_check_wants_the_best() {
        let texts: Vec<Vec<String>> = (0..2000).map(words).collect();
        let all = best_text_scores(&texts, &text_terms(0));
        let (scores, best) = &all;
        assert_eq!(best.len(), 10);
        assert!(best.windows(2).all(|w| w[0] >= w[1]));
        let mut top: Vec<(String, f64)> = scores.iter().map(|(k, v)| (k.clone(), *v)).collect();
        top.sort_by(|a, b| b.1.total_cmp(&a.1));
        let ids: Vec<String> = top.iter().take(10).map(|(k, _)| k.clone()).collect();
        assert!(check_text(&ids, &all).is_ok());
        // The best text swapped for one that has neither word.
        let mut worse = ids.clone();
        worse[0] = top.last().unwrap().0.clone();
        assert_eq!(top.last().unwrap().1, 0.0);
        assert!(check_text(&worse, &all).is_err());
        // Common words are common, rare ones rare.
        let count = |w: &str| {
            (0..2000)
                .filter(|&s| words(s).iter().any(|x| x == w))
                .count()
        };
        assert!(count("t0001") > count("t0900"));
    }
}
