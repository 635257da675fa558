//! The console: a progress line while the run goes, then a table of counts
//! per area and the cases that did not simply pass.

use super::{Report, Status};
use crate::outcome::{CaseRun, Verdict};
use std::io::{IsTerminal, Write};

/// Prints `[done/total] id verdict` on stderr, on one line on a terminal.
pub struct Progress {
    total: usize,
    done: usize,
    terminal: bool,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    pub fn case_done(&mut self, run: &CaseRun) {
        self.done += 1;
        let verdict = match run.verdict() {
            Verdict::Passed => "ok",
            Verdict::Failed(_) => "FAILED",
            Verdict::Skipped(_) => "skipped",
        };
        let line = format!("[{:>3}/{}] {} {verdict}", self.done, self.total, run.id);
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K{line}");
            if self.done == self.total {
                let _ = writeln!(err);
            }
        } else {
            let _ = writeln!(err, "{line}");
        }
    }
}

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Cosmos DB TTL conformance of {} (clock: {})\n",
        report.target.endpoint, report.target.clock
    ));
    if let Some(expectations) = &report.target.expectations {
        out.push_str(&format!("expectations: {expectations}\n"));
    }
    out.push('\n');
    let area_width = report
        .areas()
        .iter()
        .map(|(area, _)| area.len())
        .chain(["area".len(), "total".len()])
        .max()
        .unwrap_or(5);
    let mut header = format!("{:area_width$}  {:>5}", "area", "cases");
    for status in Status::ALL {
        header.push_str(&format!(
            "  {:>w$}",
            status.as_str(),
            w = status.as_str().len()
        ));
    }
    out.push_str(&header);
    out.push('\n');
    let row = |name: &str, summary: &super::Summary| {
        let mut line = format!("{name:area_width$}  {:>5}", summary.total);
        for status in Status::ALL {
            line.push_str(&format!(
                "  {:>w$}",
                summary.count(status),
                w = status.as_str().len()
            ));
        }
        line.push('\n');
        line
    };
    for (area, cases) in report.areas() {
        out.push_str(&row(area, &super::Summary::of(cases)));
    }
    out.push_str(&row("total", &report.summary));
    let notable: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.status != Status::Passed)
        .collect();
    if !notable.is_empty() {
        out.push('\n');
        for case in notable {
            out.push_str(&format!(
                "{} {} ({})\n",
                case.status.as_str().to_uppercase(),
                case.id,
                case.title
            ));
            if let Some(reason) = &case.reason {
                out.push_str(&format!("    listed: {reason}\n"));
            }
            if let Some(message) = &case.message {
                for line in message.lines() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        }
    }
    out.push_str(&format!(
        "\n{}\n",
        if report.failed() {
            "FAILED: a case failed or passed unexpectedly"
        } else {
            "ok: nothing failed unexpectedly"
        }
    ));
    out
}
