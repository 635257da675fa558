//! The instant a query runs at: what `GetCurrentDateTime`,
//! `GetCurrentTimestamp`, `GetCurrentTicks` (and their `Static` variants)
//! return. It is read once per query, from the emulator's clock, so every
//! call in one query gives the same instant and a manual clock moves them;
//! a run carries it in its context (`context.rs`).

use super::{PreparedQuery, QueryBody};
use crate::data::clock::{Clock, ClockMode};
use crate::protocol::error::ApiResult;

impl PreparedQuery {
    /// [`PreparedQuery::prepare`] for a query that runs at `now_millis`
    /// (epoch milliseconds; the handlers pass `Clock::now_millis`).
    pub fn prepare_at(body: &QueryBody, now_millis: i64) -> ApiResult<Self> {
        let mut query = Self::prepare(body)?;
        query.now_millis = Some(now_millis);
        Ok(query)
    }

    /// The instant the query runs at: its own, else the machine's clock
    /// as it starts.
    pub(super) fn now(&self) -> i64 {
        self.now_millis
            .unwrap_or_else(|| Clock::new(ClockMode::System).now_millis())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::{PreparedQuery, QueryBody};

    fn run_at(query: &str, now_millis: i64, docs: &[Value]) -> Vec<Value> {
        let body = QueryBody {
            query: query.into(),
            parameters: vec![],
        };
        PreparedQuery::prepare_at(&body, now_millis)
            .unwrap()
            .run_values(docs.iter().cloned())
            .unwrap()
    }

    #[test]
    fn every_call_of_a_query_reads_its_one_instant() {
        let docs = [json!({"id": "a"}), json!({"id": "b"})];
        let rows = run_at(
            "SELECT c.id, GetCurrentTimestamp() AS ms, GetCurrentTimestampStatic() AS s, \
             GetCurrentTicks() AS t, GetCurrentDateTime() AS dt FROM c",
            1_594_336_813_457,
            &docs,
        );
        for (row, id) in rows.iter().zip(["a", "b"]) {
            assert_eq!(
                row,
                &json!({"id": id, "ms": 1_594_336_813_457_i64, "s": 1_594_336_813_457_i64,
                        "t": 15_943_368_134_570_000_i64, "dt": "2020-07-09T23:20:13.4570000Z"})
            );
        }
        let ttl = "SELECT VALUE c.id FROM c WHERE c._ts + c.ttl > GetCurrentTimestamp() / 1000";
        let docs = [
            json!({"id": "old", "_ts": 100, "ttl": 10}),
            json!({"id": "new", "_ts": 105, "ttl": 10}),
        ];
        assert_eq!(
            run_at(ttl, 109_000, &docs),
            vec![json!("old"), json!("new")]
        );
        assert_eq!(run_at(ttl, 110_000, &docs), vec![json!("new")]);
        assert!(run_at(ttl, 115_000, &docs).is_empty());
    }

    #[test]
    fn a_query_prepared_without_an_instant_reads_the_system_clock() {
        let body = QueryBody {
            query: "SELECT DISTINCT VALUE GetCurrentTicks() FROM c".into(),
            parameters: vec![],
        };
        // Long enough for the clock to move while it runs: one instant still.
        let rows = PreparedQuery::prepare(&body)
            .unwrap()
            .run_values((0..50_000).map(|i| json!({ "i": i })))
            .unwrap();
        assert_eq!(rows.len(), 1, "{rows:?}");
        let ticks = rows[0].as_i64().unwrap();
        assert!(ticks > 16_000_000_000_000_000, "{ticks}");
    }

    #[test]
    fn query_plans_keep_the_calls() {
        let body = QueryBody {
            query: "SELECT c.id FROM c WHERE c.at < GetCurrentDateTime() ORDER BY c.id".into(),
            parameters: vec![],
        };
        let plan = PreparedQuery::prepare_at(&body, 0).unwrap().plan().unwrap();
        let rewritten = plan["queryInfo"]["rewrittenQuery"].as_str().unwrap();
        assert!(rewritten.contains("GETCURRENTDATETIME()"), "{rewritten}");
    }
}
