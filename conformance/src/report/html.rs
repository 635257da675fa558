//! `report.html`: one self-contained page (inline CSS and JS, no network)
//! a person can look at. The example tables (E) and the matrix (M) are laid
//! out as in the documentation, rows the item's `ttl` and columns the
//! container's `defaultTtl`, each cell coloured by its case's status and
//! opening onto the case's expected and observed timeline; the other areas
//! are lists; the run's target, clock, expectations and totals come first.

use super::{CaseReport, Report, Status};

const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
dl.run { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; margin: 0; }
dl.run dt { font-weight: 600; } dl.run dd { margin: 0; font-family: monospace; }
.totals span { display: inline-block; padding: .15em .6em; margin: .4em .3em 0 0; border-radius: 3px; }
table.grid { border-collapse: collapse; margin-top: .5em; }
table.grid th, table.grid td { border: 1px solid #888; padding: .4em .6em; vertical-align: top; }
table.grid thead th { background: #eee; }
table.grid tbody th { background: #eee; text-align: left; font-family: monospace; }
table.grid td { min-width: 9em; }
.case { display: block; margin: .15em 0; }
.case summary { cursor: pointer; font-weight: 600; }
.status { font-weight: normal; font-size: .85em; }
.note { font-size: .8em; color: #5d4037; }
.timeline { border-collapse: collapse; margin: .4em 0; font: 12px monospace; background: #fff; }
.timeline td, .timeline th { border: 1px solid #ccc; padding: .1em .4em; text-align: left; }
.timeline tr.differs td { background: #ffcdd2; }
.timeline tr.protocol td { background: #fff3cd; }
ul.cases { list-style: none; padding: 0; }
ul.cases li { margin: .2em 0; padding: .2em .5em; border-left-width: 6px; border-left-style: solid; }
.title { font-weight: normal; margin-left: .5em; }
.message { white-space: pre-wrap; font: 12px monospace; margin: .3em 0; }
.passed { background: #c8e6c9; border-color: #2e7d32; }
.failed { background: #ef9a9a; border-color: #c62828; }
.expected-failure { background: #ffe082; border-color: #ef6c00; }
.unexpected-pass { background: #ce93d8; border-color: #6a1b9a; }
.skipped { background: #e0e0e0; border-color: #757575; }
td.empty { background: #fafafa; }
"#;

/// Opens every case's timeline or closes them all.
const SCRIPT: &str = r#"
function toggleAll(open) {
  document.querySelectorAll('details.case').forEach(function (d) { d.open = open; });
}
"#;

pub fn render(report: &Report) -> String {
    let mut html = String::new();
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<title>Cosmos DB TTL conformance</title>\n");
    html.push_str(&format!(
        "<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n"
    ));
    html.push_str("</head>\n<body>\n<h1>Cosmos DB TTL conformance</h1>\n");
    html.push_str(&header(report));
    html.push_str(
        "<p><button onclick=\"toggleAll(true)\">expand all</button> \
         <button onclick=\"toggleAll(false)\">collapse all</button></p>\n",
    );
    for (table, title) in [
        ("E", "Example tables E1-E3"),
        ("M", "Collection/document matrix M1-M3"),
    ] {
        let cases: Vec<&CaseReport> = report
            .cases
            .iter()
            .filter(|c| c.cell.as_ref().is_some_and(|cell| cell.table == table))
            .collect();
        if !cases.is_empty() {
            html.push_str(&format!("<h2>{title}</h2>\n"));
            html.push_str(&grid(table, &cases));
        }
    }
    for (area, cases) in report.areas() {
        let listed: Vec<&CaseReport> = cases.into_iter().filter(|c| c.cell.is_none()).collect();
        if listed.is_empty() {
            continue;
        }
        html.push_str(&format!(
            "<h2>{}</h2>\n<ul class=\"cases\" id=\"area-{}\">\n",
            escape(area),
            escape(area)
        ));
        for case in listed {
            html.push_str(&format!(
                "<li class=\"{}\">{}</li>\n",
                case.status.as_str(),
                case_block(case, true)
            ));
        }
        html.push_str("</ul>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
}

fn header(report: &Report) -> String {
    let target = &report.target;
    let mut rows = vec![
        ("target", target.endpoint.clone()),
        ("clock", target.clock.clone()),
        (
            "time scale",
            match target.time_scale {
                Some(scale) => format!("{scale} real seconds per fixture second"),
                None => "none: the target's test clock moves exact seconds".to_string(),
            },
        ),
        (
            "expectations",
            target
                .expectations
                .clone()
                .unwrap_or_else(|| "none".to_string()),
        ),
    ];
    if let Some(filter) = &target.filter {
        rows.push(("filter", filter.clone()));
    }
    if let Some(containers) = &target.containers {
        rows.push(("containers", containers.describe()));
    }
    let mut html = String::from("<dl class=\"run\">\n");
    for (name, value) in rows {
        html.push_str(&format!("<dt>{name}</dt><dd>{}</dd>\n", escape(&value)));
    }
    html.push_str("</dl>\n<div class=\"totals\" id=\"totals\">");
    html.push_str(&format!("<span>{} cases</span>", report.summary.total));
    for status in Status::ALL {
        html.push_str(&format!(
            "<span class=\"{}\">{} {}</span>",
            status.as_str(),
            report.summary.count(status),
            status.as_str()
        ));
    }
    html.push_str(&format!(
        "<span>{} with protocol notes</span>",
        report.summary.protocol_notes
    ));
    let verdict = if report.failed() {
        "FAILED: a case failed or passed unexpectedly"
    } else {
        "ok: nothing failed unexpectedly"
    };
    html.push_str(&format!("</div>\n<p><strong>{verdict}</strong></p>\n"));
    html
}

/// One documentation table: rows the item's ttl, columns the container's
/// defaultTtl, in the order the fixtures first use them.
fn grid(table: &str, cases: &[&CaseReport]) -> String {
    let mut rows: Vec<&str> = Vec::new();
    let mut columns: Vec<&str> = Vec::new();
    for case in cases {
        let cell = case.cell.as_ref().expect("filtered on cells");
        if !rows.contains(&cell.row.as_str()) {
            rows.push(&cell.row);
        }
        if !columns.contains(&cell.column.as_str()) {
            columns.push(&cell.column);
        }
    }
    let mut html = format!(
        "<table class=\"grid\" id=\"table-{table}\">\n<thead><tr><th>item <code>ttl</code> \\ container <code>defaultTtl</code></th>"
    );
    for column in &columns {
        html.push_str(&format!("<th>{}</th>", escape(column)));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for row in &rows {
        html.push_str(&format!("<tr><th>{}</th>", escape(row)));
        for column in &columns {
            let here: Vec<&&CaseReport> = cases
                .iter()
                .filter(|c| {
                    c.cell
                        .as_ref()
                        .is_some_and(|cell| cell.row == *row && cell.column == *column)
                })
                .collect();
            // A cell holds one case (two would share a colour: show the worst).
            match here.iter().map(|c| c.status).max_by_key(|s| severity(*s)) {
                None => html.push_str("<td class=\"empty\"></td>"),
                Some(status) => {
                    html.push_str(&format!(
                        "<td class=\"{}\" data-row=\"{}\" data-column=\"{}\">",
                        status.as_str(),
                        escape(row),
                        escape(column)
                    ));
                    for case in here {
                        html.push_str(&case_block(case, false));
                    }
                    html.push_str("</td>");
                }
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n");
    html
}

fn severity(status: Status) -> u8 {
    match status {
        Status::Passed => 0,
        Status::Skipped => 1,
        Status::ExpectedFailure => 2,
        Status::UnexpectedPass => 3,
        Status::Failed => 4,
    }
}

/// A case: id and status (and its title in lists; on hover in tables), the
/// timeline on expand.
fn case_block(case: &CaseReport, with_title: bool) -> String {
    let notes = if case.protocol.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"note\">{} protocol note{}</span>",
            case.protocol.len(),
            if case.protocol.len() == 1 { "" } else { "s" }
        )
    };
    let mut html = format!(
        "<details class=\"case\" data-case=\"{id}\" data-status=\"{status}\" title=\"{title}\"><summary>{id} <span class=\"status\">{status}</span>{notes}{shown}</summary>",
        shown = if with_title {
            format!("<span class=\"title\">{}</span>", escape(&case.title))
        } else {
            String::new()
        },
        id = escape(&case.id),
        status = case.status.as_str(),
        title = escape(&case.title),
    );
    html.push_str(&format!("<div>{}</div>", escape(&case.title)));
    html.push_str(&timeline(case));
    if let Some(reason) = &case.reason {
        html.push_str(&format!(
            "<div class=\"message\">listed: {}</div>",
            escape(reason)
        ));
    }
    if let Some(message) = &case.message {
        html.push_str(&format!("<div class=\"message\">{}</div>", escape(message)));
    }
    html.push_str("</details>");
    html
}

/// The steps side by side: expected, observed; differing rows marked.
fn timeline(case: &CaseReport) -> String {
    let expected: Vec<&str> = case.expected.split("; ").collect();
    let whole_run =
        !(case.observed.starts_with("setup failed:") || case.observed.starts_with("skipped:"));
    let observed: Vec<&str> = if whole_run {
        case.observed.split("; ").collect()
    } else {
        Vec::new()
    };
    let mut html = String::from(
        "<table class=\"timeline\"><tr><th>step</th><th>expected</th><th>observed</th></tr>",
    );
    for (index, step) in expected.iter().enumerate() {
        let (label, want) = step.split_once(": ").unwrap_or((step, ""));
        let got = observed
            .get(index)
            .and_then(|o| o.split_once(": ").map(|(_, token)| token))
            .unwrap_or(if whole_run { "" } else { "not run" });
        let differs = case
            .mismatches
            .iter()
            .any(|m| m.starts_with(&format!("{label}: ")));
        let class = if differs {
            " class=\"differs\""
        } else if want != got {
            " class=\"protocol\""
        } else {
            ""
        };
        html.push_str(&format!(
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(label),
            escape(want),
            escape(got)
        ));
    }
    html.push_str("</table>");
    html
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
