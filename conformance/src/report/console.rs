//! The console: a progress line while the run goes, then a table of counts
//! per area and the cases that did not simply pass.

use super::{Report, Status};
use crate::expectations::{self, Expectations};
use crate::outcome::CaseRun;
use std::io::{IsTerminal, Write};

/// Prints `[done/total] id outcome` on stderr, on one line on a terminal.
/// The outcome is the case's status once its expectation is applied, the
/// same as in the reports: a listed failure reads `expected failure`.
pub struct Progress<'a> {
    total: usize,
    done: usize,
    terminal: bool,
    expectations: Option<&'a Expectations>,
}

impl<'a> Progress<'a> {
    pub fn new(total: usize, expectations: Option<&'a Expectations>) -> Progress<'a> {
        Progress {
            total,
            done: 0,
            terminal: std::io::stderr().is_terminal(),
            expectations,
        }
    }

    pub fn case_done(&mut self, run: &CaseRun) {
        self.done += 1;
        let line = format!(
            "[{:>3}/{}] {} {}",
            self.done,
            self.total,
            run.id,
            progress_text(run, self.expectations)
        );
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

/// What a progress line says about a finished case.
pub fn progress_text(run: &CaseRun, expectations: Option<&Expectations>) -> String {
    let listed = expectations.and_then(|e| e.find(&run.id));
    let judgement = expectations::judge(run, listed);
    let notes = run.protocol_notes().len();
    let notes = match notes {
        0 => String::new(),
        1 => " (1 protocol note)".to_string(),
        n => format!(" ({n} protocol notes)"),
    };
    let first_line = |text: &Option<String>| {
        text.as_deref()
            .and_then(|t| t.lines().next())
            .unwrap_or("")
            .to_string()
    };
    match judgement.status {
        Status::Passed => format!("ok{notes}"),
        Status::Skipped => "skipped".to_string(),
        Status::ExpectedFailure => format!(
            "expected failure ({})",
            listed.map(|l| l.reason.as_str()).unwrap_or("")
        ),
        Status::UnexpectedPass => format!(
            "unexpected pass (listed: {})",
            listed.map(|l| l.reason.as_str()).unwrap_or("")
        ),
        Status::Failed if !run.ran_fully() => {
            let why = run
                .setup_error
                .clone()
                .or_else(|| {
                    run.steps.iter().find_map(|s| {
                        s.detail
                            .clone()
                            .filter(|_| s.observed == crate::outcome::NO_ANSWER)
                    })
                })
                .unwrap_or_default();
            let listed = if listed.is_some() { "listed, but " } else { "" };
            format!("ERROR ({listed}did not run to the end: {why})")
        }
        Status::Failed if listed.is_some() => {
            "FAILS DIFFERENTLY from its listing (see the report)".to_string()
        }
        Status::Failed => format!("FAILED ({})", first_line(&judgement.message)),
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
    if let Some(containers) = &report.target.containers {
        out.push_str(&format!("{}\n", containers.describe()));
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
    header.push_str("  protocol-notes");
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
        line.push_str(&format!("  {:>14}\n", summary.protocol_notes));
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
    let noted: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Passed && !c.protocol.is_empty())
        .collect();
    if !noted.is_empty() {
        out.push_str("\nPASSED ON TTL, WITH PROTOCOL NOTES\n");
        for case in noted {
            out.push_str(&format!("{} ({})\n", case.id, case.title));
            for note in &case.protocol {
                out.push_str(&format!("    protocol: {note}\n"));
            }
        }
    }
    out.push_str(&format!(
        "\n{}{}\n",
        if report.failed() {
            "FAILED: a case failed or passed unexpectedly"
        } else {
            "ok: nothing failed unexpectedly"
        },
        report
            .target
            .containers
            .as_ref()
            .map(|c| format!(" ({})", c.describe()))
            .unwrap_or_default()
    ));
    out
}
