//! `report.md`: a summary and a table per area, for pull requests and wikis.

use super::{Report, Status};

pub fn render(report: &Report) -> String {
    let mut md = String::new();
    md.push_str("# Cosmos DB TTL conformance\n\n");
    md.push_str(&format!("- target: `{}`\n", report.target.endpoint));
    md.push_str(&format!("- clock: {}\n", report.target.clock));
    if let Some(expectations) = &report.target.expectations {
        md.push_str(&format!("- expectations: `{expectations}`\n"));
    }
    if let Some(filter) = &report.target.filter {
        md.push_str(&format!("- filter: `{filter}`\n"));
    }
    if let Some(containers) = &report.target.containers {
        md.push_str(&format!("- {}\n", containers.describe()));
    }
    md.push_str(&format!(
        "- {} cases with protocol notes (never the reason a case fails)\n",
        report.summary.protocol_notes
    ));
    let summary: Vec<String> = Status::ALL
        .iter()
        .map(|s| format!("{} {}", report.summary.count(*s), s.as_str()))
        .collect();
    md.push_str(&format!(
        "- {} cases: {}\n",
        report.summary.total,
        summary.join(", ")
    ));
    for (area, cases) in report.areas() {
        md.push_str(&format!("\n## {area}\n\n"));
        md.push_str("| case | status | source | expected | observed | note |\n");
        md.push_str("|---|---|---|---|---|---|\n");
        for case in cases {
            let mut note = case
                .reason
                .as_deref()
                .or(case.message.as_deref())
                .unwrap_or("")
                .to_string();
            // A passed case's protocol notes (a failure's message has them).
            if case.message.is_none() && !case.protocol.is_empty() {
                note = format!("protocol: {}", case.protocol.join("; "));
            }
            if !case.waits.is_empty() {
                let waits = case.waits.join("; ");
                note = if note.is_empty() {
                    waits
                } else {
                    format!("{note}; {waits}")
                };
            }
            let observed = if case.observed == case.expected {
                "as expected"
            } else {
                &case.observed
            };
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                cell(&case.id),
                case.status.as_str(),
                cell(&case.source.to_string()),
                cell(&case.expected),
                cell(observed),
                cell(&note)
            ));
        }
    }
    md
}

/// Text that cannot break a table row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', "<br>")
}
