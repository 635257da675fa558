//! Expectations: an implementation's known failures, each with a reason
//! (`fixtures/expectations/<implementation>.toml`). A listed failure is
//! reported but does not fail the run; a listed case that passes fails it,
//! so that the list shrinks. A listed case counts as an expected failure
//! only when it ran to the end and failed as listed: a case that could not
//! be set up, or got no answer, is never excused by the list.

use crate::outcome::{CaseRun, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// An implementation's known failures against the conformance suite
/// (`fixtures/expectations/*.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "cosmos-conformance expectations file")]
pub struct Expectations {
    /// Who these are for, e.g. `@vercel/cosmosdb-server 0.14.0`.
    pub implementation: String,
    /// How the list was made (command, date-free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
    /// The known failures, each a `[[failure]]` table.
    #[serde(default, rename = "failure")]
    pub failures: Vec<KnownFailure>,
}

/// A case expected to fail, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    /// The case's id; listed once.
    pub id: String,
    /// Why it fails, for people.
    #[schemars(length(min = 1))]
    pub reason: String,
    /// The TTL mismatches the failure consists of, as in the report
    /// (`@1500 read a: expected absent, observed visible`). When given, the
    /// case is an expected failure only if it fails exactly so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<String>,
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

    /// The entry of a case, if it is listed.
    pub fn find(&self, id: &str) -> Option<&KnownFailure> {
        self.failures.iter().find(|f| f.id == id)
    }

    /// Listed ids that are not among `ids` (stale entries, typos).
    pub fn unknown<'a>(&'a self, ids: &[&str]) -> Vec<&'a str> {
        self.failures
            .iter()
            .map(|f| f.id.as_str())
            .filter(|id| !ids.contains(id))
            .collect()
    }

    pub fn to_toml(&self) -> String {
        let header = "# Known failures of one implementation against the conformance suite.\n\
                      # A listed case that fails is an expected failure; a listed case that\n\
                      # passes fails the run (unexpected pass), so remove it. Regenerate with\n\
                      # `cosmos-conformance ... --write-expectations FILE` (keeps the reasons).\n\n";
        format!(
            "{header}{}",
            toml::to_string_pretty(self).expect("expectations serialise")
        )
    }
}

/// A case's status once its expectation (if any) is applied to its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Passed,
    Failed,
    ExpectedFailure,
    UnexpectedPass,
    Skipped,
}

impl Status {
    pub const ALL: [Status; 5] = [
        Status::Passed,
        Status::Failed,
        Status::ExpectedFailure,
        Status::UnexpectedPass,
        Status::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::ExpectedFailure => "expected-failure",
            Status::UnexpectedPass => "unexpected-pass",
            Status::Skipped => "skipped",
        }
    }

    /// Whether this status makes the run fail.
    pub fn fails_run(self) -> bool {
        matches!(self, Status::Failed | Status::UnexpectedPass)
    }
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

/// A case's status once its expectation is applied, and the message to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub status: Status,
    pub message: Option<String>,
}

/// Applies a case's entry (if listed) to its run: an expected failure
/// needs a run that got to the end and failed as the entry describes.
pub fn judge(run: &CaseRun, listed: Option<&KnownFailure>) -> Judgement {
    let verdict = run.verdict();
    let status = status(&verdict, listed.is_some());
    let message = match (&verdict, listed) {
        (Verdict::Passed, None) => None,
        (Verdict::Passed, Some(_)) => Some(
            "passed, but the expectations list it as a known failure: remove it from the list"
                .to_string(),
        ),
        (Verdict::Failed(m) | Verdict::Skipped(m), _) => Some(m.clone()),
    };
    let (Verdict::Failed(failure), Some(entry)) = (&verdict, listed) else {
        return Judgement { status, message };
    };
    if !run.ran_fully() {
        return Judgement {
            status: Status::Failed,
            message: Some(format!(
                "listed as a known failure, but the case did not run to the end, so it proves nothing:\n{failure}"
            )),
        };
    }
    let observed = run.ttl_mismatches();
    if !entry.mismatches.is_empty() && entry.mismatches != observed {
        return Judgement {
            status: Status::Failed,
            message: Some(format!(
                "listed as a known failure, but it fails differently\nlisted:\n  {}\nobserved:\n  {}",
                entry.mismatches.join("\n  "),
                observed.join("\n  ")
            )),
        };
    }
    Judgement { status, message }
}
