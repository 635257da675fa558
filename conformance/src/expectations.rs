//! Expectations: an implementation's known failures, each with a reason
//! (`fixtures/expectations/<implementation>.toml`). A listed failure is
//! reported but does not fail the run; a listed case that passes fails it,
//! so that the list shrinks.

use crate::outcome::Verdict;
use crate::report::{Report, Status};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// Who these are for, e.g. `@vercel/cosmosdb-server 0.14.0`.
    pub implementation: String,
    /// How the list was made (command, date-free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
    #[serde(default, rename = "failure")]
    pub failures: Vec<KnownFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    pub id: String,
    pub reason: String,
}

impl Expectations {
    /// `NAME` means `<fixtures>/expectations/NAME.toml`; anything with a
    /// path separator or a `.toml` ending is a file.
    pub fn locate(name_or_file: &str, fixtures: &Path) -> PathBuf {
        if name_or_file.contains(['/', '\\']) || name_or_file.ends_with(".toml") {
            PathBuf::from(name_or_file)
        } else {
            fixtures
                .join("expectations")
                .join(format!("{name_or_file}.toml"))
        }
    }

    pub fn load(file: &Path) -> Result<Expectations, String> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read expectations {}: {e}", file.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", file.display()))
    }

    pub fn parse(text: &str) -> Result<Expectations, String> {
        let expectations: Expectations =
            toml::from_str(text).map_err(|e| format!("not a valid expectations file: {e}"))?;
        let mut seen = std::collections::BTreeSet::new();
        for failure in &expectations.failures {
            if failure.reason.trim().is_empty() {
                return Err(format!("{} is listed without a reason", failure.id));
            }
            if !seen.insert(failure.id.as_str()) {
                return Err(format!("{} is listed twice", failure.id));
            }
        }
        Ok(expectations)
    }

    /// The reason a case is expected to fail, if it is listed.
    pub fn reason(&self, id: &str) -> Option<&str> {
        self.failures
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.reason.as_str())
    }

    /// Listed ids that are not among `ids` (stale entries, typos).
    pub fn unknown<'a>(&'a self, ids: &[&str]) -> Vec<&'a str> {
        self.failures
            .iter()
            .map(|f| f.id.as_str())
            .filter(|id| !ids.contains(id))
            .collect()
    }

    /// The list a report calls for: every case that failed (listed or not),
    /// keeping the reasons already written; cases that now pass drop out,
    /// skipped cases keep their entry (the run could not tell).
    pub fn from_report(
        report: &Report,
        previous: Option<&Expectations>,
        implementation: &str,
        generated: &str,
    ) -> Expectations {
        let previous_reason = |id: &str| previous.and_then(|p| p.reason(id)).map(str::to_string);
        let mut failures: BTreeMap<&str, String> = BTreeMap::new();
        for case in &report.cases {
            let reason = match case.status {
                Status::Failed | Status::ExpectedFailure => previous_reason(&case.id)
                    .unwrap_or_else(|| {
                        let message = case.message.as_deref().unwrap_or("failed");
                        format!("observed: {}", first_line(message))
                    }),
                Status::Skipped => match previous_reason(&case.id) {
                    Some(reason) => reason,
                    None => continue,
                },
                Status::Passed | Status::UnexpectedPass => continue,
            };
            failures.insert(&case.id, reason);
        }
        // Keep the fixtures' order, which reads like the documentation.
        let order: Vec<&str> = report.cases.iter().map(|c| c.id.as_str()).collect();
        let mut failures: Vec<KnownFailure> = failures
            .into_iter()
            .map(|(id, reason)| KnownFailure {
                id: id.to_string(),
                reason,
            })
            .collect();
        failures.sort_by_key(|f| order.iter().position(|id| *id == f.id));
        Expectations {
            implementation: implementation.to_string(),
            generated: Some(generated.to_string()),
            failures,
        }
    }

    pub fn to_toml(&self) -> String {
        let header = "# Known failures of one implementation against the conformance suite.\n\
                      # A listed case that fails is an expected failure; a listed case that\n\
                      # passes fails the run (unexpected pass), so remove it. Regenerate with\n\
                      # `cargo xtask expectations --from target/conformance/report.json --name NAME`.\n\n";
        format!(
            "{header}{}",
            toml::to_string_pretty(self).expect("expectations serialise")
        )
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// A case's status once expectations are applied.
pub fn status(verdict: &Verdict, expected_to_fail: bool) -> Status {
    match (verdict, expected_to_fail) {
        (Verdict::Skipped(_), _) => Status::Skipped,
        (Verdict::Passed, false) => Status::Passed,
        (Verdict::Passed, true) => Status::UnexpectedPass,
        (Verdict::Failed(_), false) => Status::Failed,
        (Verdict::Failed(_), true) => Status::ExpectedFailure,
    }
}
