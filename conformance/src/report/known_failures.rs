//! The expectations a report calls for (`--write-expectations`): every
//! case that failed, listed or not, with the reasons already written.

use super::{Report, Status};
use crate::expectations::{Expectations, KnownFailure};
use std::collections::BTreeMap;

impl Expectations {
    /// The list a report calls for: every case that failed (listed or not),
    /// keeping the reasons already written; cases that now pass drop out,
    /// skipped cases keep their entry (the run could not tell).
    pub fn from_report(
        report: &Report,
        previous: Option<&Expectations>,
        implementation: &str,
        generated: &str,
    ) -> Expectations {
        let previous_entry = |id: &str| previous.and_then(|p| p.find(id));
        let mut failures: BTreeMap<&str, KnownFailure> = BTreeMap::new();
        for case in &report.cases {
            let entry = match case.status {
                // Only a failure observed to the end can be listed: an
                // error (setup, no answer) would never count as expected.
                Status::Failed | Status::ExpectedFailure if case.ran_fully() => KnownFailure {
                    id: case.id.clone(),
                    reason: previous_entry(&case.id)
                        .map(|p| p.reason.clone())
                        .unwrap_or_else(|| {
                            let message = case.message.as_deref().unwrap_or("failed");
                            format!("observed: {}", first_line(message))
                        }),
                    mismatches: case.mismatches.clone(),
                },
                Status::Skipped => match previous_entry(&case.id) {
                    Some(entry) => entry.clone(),
                    None => continue,
                },
                _ => continue,
            };
            failures.insert(&case.id, entry);
        }
        // Keep the fixtures' order, which reads like the documentation.
        let order: Vec<&str> = report.cases.iter().map(|c| c.id.as_str()).collect();
        let mut failures: Vec<KnownFailure> = failures.into_values().collect();
        failures.sort_by_key(|f| order.iter().position(|id| *id == f.id));
        Expectations {
            implementation: implementation.to_string(),
            generated: Some(generated.to_string()),
            failures,
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}
