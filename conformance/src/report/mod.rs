//! The run's report: one model, written as a console table, `report.json`,
//! JUnit XML `report.xml` and Markdown `report.md`; and the expectations
//! it calls for (`known_failures.rs`). A case's `Status` is the one
//! `expectations.rs` judges.

pub mod console;
pub mod html;
pub mod json;
pub mod junit;
mod known_failures;
pub mod markdown;

pub use crate::expectations::Status;
use crate::expectations::{self, Expectations};
use crate::fixtures::{Action, Case, Source};
use crate::outcome::{CaseRun, NOT_RUN, NO_ANSWER};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What was tested, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub endpoint: String,
    pub clock: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectations: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// Real seconds per fixture second, on the wall clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    /// `--container-throughput`: how the cases' containers were provisioned
    /// and how many partition key ranges the target gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<Containers>,
}

/// The containers of a run with `--container-throughput`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Containers {
    /// The `x-ms-offer-throughput` (RU/s) each was created with.
    pub throughput: u32,
    /// The distinct numbers of ranges `GET .../pkranges` listed for the
    /// cases' containers, ascending (one number when all had as many).
    pub ranges: Vec<usize>,
}

impl Containers {
    /// `containers of 24000 RU/s, 4 partition key ranges each`.
    pub fn describe(&self) -> String {
        let ranges = match self.ranges.as_slice() {
            [] => "partition key ranges not read".to_string(),
            [1] => "1 partition key range each".to_string(),
            [n] => format!("{n} partition key ranges each"),
            [first, .., last] => format!("{first} to {last} partition key ranges"),
        };
        format!("containers of {} RU/s, {ranges}", self.throughput)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub expected_failure: usize,
    pub unexpected_pass: usize,
    pub skipped: usize,
    /// Cases with protocol notes (whatever their status).
    #[serde(default)]
    pub protocol_notes: usize,
}

impl Summary {
    pub fn count(&self, status: Status) -> usize {
        match status {
            Status::Passed => self.passed,
            Status::Failed => self.failed,
            Status::ExpectedFailure => self.expected_failure,
            Status::UnexpectedPass => self.unexpected_pass,
            Status::Skipped => self.skipped,
        }
    }

    fn add(&mut self, status: Status) {
        self.total += 1;
        *match status {
            Status::Passed => &mut self.passed,
            Status::Failed => &mut self.failed,
            Status::ExpectedFailure => &mut self.expected_failure,
            Status::UnexpectedPass => &mut self.unexpected_pass,
            Status::Skipped => &mut self.skipped,
        } += 1;
    }

    pub fn of<'a>(cases: impl IntoIterator<Item = &'a CaseReport>) -> Summary {
        let mut summary = Summary::default();
        for case in cases {
            summary.add(case.status);
            if !case.protocol.is_empty() {
                summary.protocol_notes += 1;
            }
        }
        summary
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseReport {
    pub id: String,
    pub area: String,
    pub title: String,
    pub status: Status,
    /// The fixture's outcome text.
    pub expected: String,
    /// The observed outcome text, in the same form.
    pub observed: String,
    pub source: Source,
    /// The fixture file.
    pub file: String,
    /// Why it failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The expectations file's reason, for listed cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The steps whose TTL part differs (what decided a failure).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<String>,
    /// Protocol deviations: steps whose TTL part agrees but whose token
    /// does not (a 201 for a 200, an error without `code`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protocol: Vec<String>,
    /// Where the case sits in the documentation's tables, if it is a cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<TableCell>,
    /// How its change feed steps waited for the purge (the bound, how long).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<String>,
}

/// A cell of the example tables (`E`) or the matrix (`M`): the row is the
/// item's `ttl`, the column the container's `defaultTtl`, both as the case
/// sends them (`absent` / `missing` when the property is not sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableCell {
    pub table: String,
    pub row: String,
    pub column: String,
}

impl TableCell {
    /// The cell of a case whose first citation is a table cell (`E3.1`,
    /// `M2.3`), read from its data: the container body and the first create.
    pub fn of(case: &Case) -> Option<TableCell> {
        let first = case.source.cites.first()?;
        let table = first.get(..1).filter(|t| *t == "E" || *t == "M")?;
        let container = case.container.as_ref()?;
        let item = case.steps.iter().find_map(|step| match &step.action {
            Action::Create(body) => Some(body),
            _ => None,
        })?;
        let label = |value: Option<&serde_json::Value>, missing: &str| match value {
            None => missing.to_string(),
            Some(value) => value.to_string(),
        };
        Some(TableCell {
            table: table.to_string(),
            row: label(item.get("ttl"), "absent"),
            column: label(container.get("defaultTtl"), "missing"),
        })
    }
}

impl CaseReport {
    /// Whether the TTL verdict is a pass (whatever the expectations said).
    pub fn ttl_passed(&self) -> bool {
        matches!(self.status, Status::Passed | Status::UnexpectedPass)
    }

    /// Whether every step got an answer (see `CaseRun::ran_fully`).
    pub fn ran_fully(&self) -> bool {
        !self.observed.starts_with("setup failed:")
            && !self.observed.starts_with("skipped:")
            && !self.mismatches.iter().any(|m| {
                m.ends_with(&format!("observed {NO_ANSWER}"))
                    || m.ends_with(&format!("observed {NOT_RUN}"))
            })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub target: Target,
    pub summary: Summary,
    pub cases: Vec<CaseReport>,
}

impl Report {
    /// Joins cases with their runs (same order) and applies expectations.
    pub fn new(
        target: Target,
        cases: &[Case],
        runs: &[CaseRun],
        expectations: Option<&Expectations>,
    ) -> Report {
        assert_eq!(cases.len(), runs.len(), "one run per case");
        let cases: Vec<CaseReport> = cases
            .iter()
            .zip(runs)
            .map(|(case, run)| {
                let listed = expectations.and_then(|e| e.find(&case.id));
                let judgement = expectations::judge(run, listed);
                CaseReport {
                    id: case.id.clone(),
                    area: case.area.clone(),
                    title: case.title.clone(),
                    status: judgement.status,
                    expected: run.expected_text(),
                    observed: run.observed_text(),
                    source: case.source.clone(),
                    file: case
                        .file
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    message: judgement.message,
                    reason: listed.map(|l| l.reason.clone()),
                    mismatches: run.ttl_mismatches(),
                    protocol: run.protocol_notes(),
                    cell: TableCell::of(case),
                    waits: run.waits(),
                }
            })
            .collect();
        Report {
            target,
            summary: Summary::of(&cases),
            cases,
        }
    }

    /// Whether the run fails: a case failed unexpectedly or passed unexpectedly.
    pub fn failed(&self) -> bool {
        self.cases.iter().any(|c| c.status.fails_run())
    }

    /// The areas in fixture order, each with its cases.
    pub fn areas(&self) -> Vec<(&str, Vec<&CaseReport>)> {
        let mut areas: Vec<(&str, Vec<&CaseReport>)> = Vec::new();
        for case in &self.cases {
            match areas.iter_mut().find(|(area, _)| *area == case.area) {
                Some((_, cases)) => cases.push(case),
                None => areas.push((&case.area, vec![case])),
            }
        }
        areas
    }

    /// The outcome table of the run: each case's id and status, then its
    /// observed outcome one step a line. No times, ids or charges: this is
    /// what snapshots hold, and a changed step shows as one changed line.
    pub fn outcome_table(&self) -> String {
        let mut table = String::new();
        for case in &self.cases {
            table.push_str(&format!("{} {}\n", case.id, case.status.as_str()));
            for step in case.observed.split("; ") {
                table.push_str(&format!("    {step}\n"));
            }
        }
        table
    }

    /// Writes `report.json`, `report.xml`, `report.md` and `report.html` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("report.json"), json::render(self))?;
        std::fs::write(dir.join("report.xml"), junit::render(self))?;
        std::fs::write(dir.join("report.md"), markdown::render(self))?;
        std::fs::write(dir.join("report.html"), html::render(self))?;
        Ok(())
    }

    /// Reads a `report.json`.
    pub fn load(file: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{} is not a report: {e}", file.display()))
    }
}
