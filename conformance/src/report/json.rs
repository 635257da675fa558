//! `report.json`: the report model as JSON.

use super::Report;

pub fn render(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(report).expect("a report serialises");
    text.push('\n');
    text
}
