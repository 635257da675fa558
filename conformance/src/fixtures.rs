//! The cases as data: the model of `fixtures/cases/*.toml` and its loader.
//!
//! A file holds one area (`schema-version`, `area`, `title`, `[[case]]`...).
//! Bodies are JSON text inside TOML strings, because TOML has no null and the
//! suite must tell a missing property from an explicit `null`. The loader
//! checks everything a runner relies on, so a broken fixture is an error
//! that names its file and case, never a silently skipped check.

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The newest fixture schema this runner understands.
pub const SCHEMA_VERSION: u32 = 1;

/// The seed files of `shared/seeds/` a case may cite.
pub const SEEDS: [&str; 5] = ["000", "001", "002", "003", "004"];

/// One conformance case, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub area: String,
    pub title: String,
    pub source: Source,
    /// The body of the case's container, created before the first step
    /// (`None`: the case creates it itself with `create-container`).
    pub container: Option<Map<String, Value>>,
    pub steps: Vec<Step>,
    /// The fixture file this case comes from.
    pub file: PathBuf,
}

/// What a case cites: rules, table cells or stories, and seed files.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub cites: Vec<String>,
    pub seeds: Vec<String>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}; seeds {}",
            self.cites.join(", "),
            self.seeds.join(", ")
        )
    }
}

/// One step: at case time `at` (seconds since the case started, in the
/// fixtures' own seconds), do `action` and expect `expect`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub at: u64,
    pub action: Action,
    pub expect: Expect,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Create(Map<String, Value>),
    Upsert(Map<String, Value>),
    Replace(Map<String, Value>),
    Patch {
        id: String,
        operations: Vec<Value>,
    },
    Delete(String),
    Read {
        id: String,
        matching: Option<Map<String, Value>>,
    },
    Query {
        sql: String,
        parameters: Vec<Value>,
    },
    CreateContainer(Map<String, Value>),
    ReplaceContainer(Map<String, Value>),
    ReadContainer {
        matching: Option<Map<String, Value>>,
    },
    /// Reads the container's change feed (scoped to the case's partition)
    /// and renders what came since the case's previous read of that mode.
    Changes(Changes),
    /// A transactional batch in the case's partition (see `batch.rs`).
    Batch(Vec<Map<String, Value>>),
    /// A stored procedure run in the case's partition (see `sproc.rs`).
    Sproc(crate::sproc::Sproc),
}

/// A change feed read (`changes = "<mode>"`): see the README's change feed
/// section for the requests and the tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    pub mode: FeedMode,
    /// Where to start; `None` continues from the case's previous read of
    /// this mode (its last `etag`).
    pub from: Option<FeedStart>,
    /// First wait for the purge of every item due (all-versions only): the
    /// target's `POST /_emulator/purge`, or on the wall clock polling until
    /// the expected TTL deletes arrive, up to a bound.
    pub purge: bool,
    /// A property shown beside each id (latest-version only), e.g. `a v=2`.
    pub show: Option<String>,
    /// `x-ms-max-item-count`, to read in several pages.
    pub page_size: Option<u32>,
}

/// The change feed's two modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FeedMode {
    /// `A-IM: Incremental Feed`: the latest version of each live item.
    LatestVersion,
    /// `A-IM: Full-Fidelity Feed`: every create, replace and delete.
    AllVersions,
}

impl FeedMode {
    pub fn name(self) -> &'static str {
        match self {
            FeedMode::LatestVersion => "latest-version",
            FeedMode::AllVersions => "all-versions",
        }
    }
}

/// Where a change feed read starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedStart {
    /// No `If-None-Match` (latest-version only).
    Beginning,
    /// `If-None-Match: *`.
    Now,
}

impl Action {
    /// The verb and subject used in outcome texts, e.g. `read a`.
    pub fn label(&self) -> String {
        let id_of = |body: &Map<String, Value>| {
            body.get("id")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        };
        match self {
            Action::Create(body) => format!("create {}", id_of(body)),
            Action::Upsert(body) => format!("upsert {}", id_of(body)),
            Action::Replace(body) => format!("replace {}", id_of(body)),
            Action::Patch { id, .. } => format!("patch {id}"),
            Action::Delete(id) => format!("delete {id}"),
            Action::Read { id, .. } => format!("read {id}"),
            Action::Query { sql, .. } => format!("query `{sql}`"),
            Action::CreateContainer(_) => "create-container c".to_string(),
            Action::ReplaceContainer(_) => "replace-container c".to_string(),
            Action::ReadContainer { .. } => "read-container c".to_string(),
            Action::Changes(changes) => {
                let mut label = format!("changes {}", changes.mode.name());
                match changes.from {
                    Some(FeedStart::Now) => label.push_str(" from now"),
                    Some(FeedStart::Beginning) => label.push_str(" from beginning"),
                    None => {}
                }
                if changes.purge {
                    label.push_str(" after purge");
                }
                label
            }
            Action::Batch(operations) => crate::batch::label(operations),
            Action::Sproc(sproc) => crate::sproc::label(sproc),
        }
    }

    /// Whether the step writes (and so may start an expiry countdown); a
    /// stored procedure does when it gets an item (an object argument),
    /// since scripts write only the items they receive.
    pub fn is_item_write(&self) -> bool {
        match self {
            Action::Sproc(sproc) => sproc.args.iter().any(Value::is_object),
            _ => matches!(
                self,
                Action::Create(_)
                    | Action::Upsert(_)
                    | Action::Replace(_)
                    | Action::Patch { .. }
                    | Action::Batch(_)
            ),
        }
    }

    fn kind(&self) -> ExpectKind {
        match self {
            Action::Read { .. } | Action::ReadContainer { .. } => ExpectKind::Presence,
            Action::Query { .. } => ExpectKind::Rows,
            Action::Changes(_) => ExpectKind::Changes,
            Action::Batch(_) => ExpectKind::Batch,
            Action::Sproc(_) => ExpectKind::Sproc,
            _ => ExpectKind::Status,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExpectKind {
    Status,
    Presence,
    Rows,
    Changes,
    Batch,
    Sproc,
}

/// What a step expects to observe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// A write's HTTP status, and for errors the body's `code`.
    Status { status: u16, code: Option<String> },
    /// A point read answers 200 with the item (and its `match` properties).
    Visible,
    /// A point read answers 404.
    Absent,
    /// A query's rows, order ignored: an object's `id`, else the value as JSON.
    Rows(Vec<String>),
    /// A change feed read's entries, order ignored: `create a`,
    /// `ttl-delete a @>=1000`, `a v=2`...
    Changes(Vec<String>),
    /// A batch's HTTP status and each operation's status, in order.
    Batch { status: u16, results: Vec<u16> },
    /// A stored procedure's token: `200 {"found":false}` (the body compact,
    /// keys sorted) or an error status alone, `400`.
    Sproc(String),
}

impl Expect {
    fn parse(text: &str, kind: ExpectKind) -> Result<Expect, String> {
        match kind {
            ExpectKind::Presence => match text {
                "visible" => Ok(Expect::Visible),
                "absent" => Ok(Expect::Absent),
                _ => Err(format!(
                    "a read expects \"visible\" or \"absent\", not {text:?}"
                )),
            },
            ExpectKind::Rows => {
                let inner = text
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .ok_or_else(|| format!("a query expects rows like \"[a, b]\", not {text:?}"))?;
                Ok(Expect::Rows(normalize_rows(
                    inner
                        .split(',')
                        .map(str::trim)
                        .filter(|row| !row.is_empty())
                        .map(str::to_string)
                        .collect(),
                )))
            }
            ExpectKind::Changes => {
                let inner = text
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .ok_or_else(|| {
                        format!("a change feed read expects entries like \"[create a, ttl-delete a @>=1000]\", not {text:?}")
                    })?;
                Ok(Expect::Changes(normalize_rows(split_entries(inner))))
            }
            ExpectKind::Batch => match crate::batch::parse_expect(text)? {
                Some((status, results)) => Ok(Expect::Batch { status, results }),
                // A refusal of the whole request reads as a write's.
                None => Expect::parse(text, ExpectKind::Status),
            },
            ExpectKind::Sproc => crate::sproc::parse_expect(text).map(Expect::Sproc),
            ExpectKind::Status => {
                let (status, code) = match text.split_once(' ') {
                    Some((status, code)) => (status, Some(code.trim().to_string())),
                    None => (text, None),
                };
                let status: u16 = status
                    .parse()
                    .ok()
                    .filter(|s| (100..600).contains(s))
                    .ok_or_else(|| {
                        format!("a write expects a status like \"201\" or \"400 BadRequest\", not {text:?}")
                    })?;
                if status >= 400 && code.is_none() {
                    return Err(format!(
                        "an error status names its code too, e.g. \"{status} BadRequest\", not {text:?}"
                    ));
                }
                Ok(Expect::Status { status, code })
            }
        }
    }
}

/// Sorted rows, so that comparison ignores order.
pub fn normalize_rows(mut rows: Vec<String>) -> Vec<String> {
    rows.sort();
    rows
}

/// Splits `a v={"x":1,"y":2}, b` at the commas outside JSON brackets and
/// strings, trimmed, without empty entries.
pub fn split_entries(text: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    let mut current = String::new();
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else {
            match c {
                '"' => in_string = true,
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    entries.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
        }
        current.push(c);
    }
    entries.push(current);
    entries
        .into_iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect()
}

/// An expected TTL delete, `ttl-delete <id> @>=<instant>`: the id and the
/// case time its `crts` must not precede.
pub fn ttl_delete_bound(entry: &str) -> Option<(&str, u64)> {
    let rest = entry.strip_prefix("ttl-delete ")?;
    let (id, bound) = rest.rsplit_once(" @>=")?;
    Some((id, bound.parse().ok()?))
}

/// A fixture that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureError {
    pub file: PathBuf,
    pub case: Option<String>,
    pub message: String,
}

impl fmt::Display for FixtureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(case) = &self.case {
            write!(f, ", case {case}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FixtureError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawFile {
    schema_version: u32,
    area: String,
    title: String,
    /// Scripts the file's `sproc` steps name: name = JavaScript text.
    #[serde(default)]
    scripts: BTreeMap<String, String>,
    #[serde(default, rename = "case")]
    cases: Vec<RawCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    title: String,
    source: Source,
    container: Option<String>,
    steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawStep {
    at: Option<u64>,
    create: Option<String>,
    upsert: Option<String>,
    replace: Option<String>,
    patch: Option<String>,
    operations: Option<String>,
    delete: Option<String>,
    read: Option<String>,
    #[serde(rename = "match")]
    matching: Option<String>,
    query: Option<String>,
    parameters: Option<String>,
    create_container: Option<String>,
    replace_container: Option<String>,
    read_container: Option<String>,
    changes: Option<String>,
    batch: Option<String>,
    sproc: Option<String>,
    args: Option<String>,
    from: Option<String>,
    purge: Option<bool>,
    show: Option<String>,
    page_size: Option<u32>,
    expect: String,
}

/// Loads every `*.toml` of `dir` (sorted by file name), e.g. `fixtures/cases`.
pub fn load_dir(dir: &Path) -> Result<Vec<Case>, FixtureError> {
    let error = |message: String| FixtureError {
        file: dir.to_path_buf(),
        case: None,
        message,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| error(format!("cannot read the fixtures directory: {e}")))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(error("no *.toml fixture files".to_string()));
    }
    let files = files
        .into_iter()
        .map(|file| match std::fs::read_to_string(&file) {
            Ok(text) => Ok((file, text)),
            Err(e) => Err(FixtureError {
                file,
                case: None,
                message: format!("cannot read: {e}"),
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    load_texts(files)
}

/// Parses fixture files given as (path, text), in the order given; ids must
/// be unique across them. The path is only used in messages and reports.
pub fn load_texts(
    files: impl IntoIterator<Item = (PathBuf, String)>,
) -> Result<Vec<Case>, FixtureError> {
    let mut cases = Vec::new();
    let mut seen = BTreeSet::new();
    for (file, text) in files {
        for case in parse_file(&file, &text)? {
            if !seen.insert(case.id.clone()) {
                return Err(FixtureError {
                    file,
                    case: Some(case.id),
                    message: "the id is used by another case".to_string(),
                });
            }
            cases.push(case);
        }
    }
    Ok(cases)
}

/// Parses one fixture file's text; `file` is only used in messages.
pub fn parse_file(file: &Path, text: &str) -> Result<Vec<Case>, FixtureError> {
    let file_error = |message: String| FixtureError {
        file: file.to_path_buf(),
        case: None,
        message,
    };
    // Read the version alone first, so that a newer schema is reported as
    // such rather than as whatever field it added.
    let version = toml::from_str::<toml::Table>(text)
        .map_err(|e| file_error(format!("not valid TOML: {e}")))?
        .get("schema-version")
        .and_then(toml::Value::as_integer)
        .ok_or_else(|| file_error("missing integer `schema-version`".to_string()))?;
    if version > i64::from(SCHEMA_VERSION) || version < 1 {
        return Err(file_error(format!(
            "schema-version {version} is not understood by this runner (it reads 1 to {SCHEMA_VERSION}); update cosmos-conformance"
        )));
    }
    let raw: RawFile =
        toml::from_str(text).map_err(|e| file_error(format!("does not fit the schema: {e}")))?;
    debug_assert!(raw.schema_version <= SCHEMA_VERSION);
    if raw.area.trim().is_empty() || raw.title.trim().is_empty() {
        return Err(file_error(
            "`area` and `title` must not be empty".to_string(),
        ));
    }
    if raw.cases.is_empty() {
        return Err(file_error("no [[case]] in the file".to_string()));
    }
    for (name, body) in &raw.scripts {
        crate::sproc::check_script(name, body).map_err(file_error)?;
    }
    let cases = raw
        .cases
        .into_iter()
        .map(|case| {
            let id = case.id.clone();
            build_case(case, &raw.area, &raw.scripts, file).map_err(|message| FixtureError {
                file: file.to_path_buf(),
                case: Some(id),
                message,
            })
        })
        .collect::<Result<Vec<Case>, FixtureError>>()?;
    let used: BTreeSet<&str> = cases
        .iter()
        .flat_map(|case| &case.steps)
        .filter_map(|step| match &step.action {
            Action::Sproc(sproc) => Some(sproc.name.as_str()),
            _ => None,
        })
        .collect();
    if let Some(name) = raw.scripts.keys().find(|n| !used.contains(n.as_str())) {
        return Err(file_error(format!("script {name:?} is run by no step")));
    }
    Ok(cases)
}

fn build_case(
    raw: RawCase,
    area: &str,
    scripts: &BTreeMap<String, String>,
    file: &Path,
) -> Result<Case, String> {
    if raw.id.is_empty()
        || !raw
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err("an id is made of letters, digits, '.', '_' and '-'".to_string());
    }
    check_source(&raw.source)?;
    let container = raw
        .container
        .as_deref()
        .map(|text| json_object(text, "container"))
        .transpose()?;
    if raw.steps.is_empty() {
        return Err("a case needs at least one step".to_string());
    }
    let mut steps = Vec::with_capacity(raw.steps.len());
    let mut now = 0;
    for (index, raw_step) in raw.steps.into_iter().enumerate() {
        let step =
            build_step(raw_step, now, scripts).map_err(|e| format!("step {}: {e}", index + 1))?;
        now = step.at;
        steps.push(step);
    }
    let mut started = BTreeSet::new();
    for (index, step) in steps.iter().enumerate() {
        if let Action::Changes(changes) = &step.action {
            if changes.from.is_none() && !started.contains(&changes.mode) {
                return Err(format!(
                    "step {}: the case's first `changes = \"{}\"` says where it starts (`from`)",
                    index + 1,
                    changes.mode.name()
                ));
            }
            started.insert(changes.mode);
        }
    }
    let creates_container = steps
        .iter()
        .any(|s| matches!(s.action, Action::CreateContainer(_)));
    if container.is_some() == creates_container {
        return Err(
            "a case either has a `container` or creates it with `create-container`, not both or neither"
                .to_string(),
        );
    }
    Ok(Case {
        id: raw.id,
        area: area.to_string(),
        title: raw.title,
        source: raw.source,
        container,
        steps,
        file: file.to_path_buf(),
    })
}

fn check_source(source: &Source) -> Result<(), String> {
    if source.cites.is_empty() {
        return Err("`source.cites` must name at least one rule, cell or story".to_string());
    }
    for cite in &source.cites {
        if !is_citation(cite) {
            return Err(format!(
                "`source.cites` has {cite:?}; cite a rule (R1-R12), an example cell (E1.1-E3.3), a matrix cell (M1.1-M3.3) or a story (L1-L11)"
            ));
        }
    }
    if source.seeds.is_empty() {
        return Err("`source.seeds` must name at least one seed file".to_string());
    }
    for seed in &source.seeds {
        if !SEEDS.contains(&seed.as_str()) {
            return Err(format!(
                "`source.seeds` has {seed:?}; the seeds are {SEEDS:?}"
            ));
        }
    }
    Ok(())
}

fn is_citation(cite: &str) -> bool {
    let number_in =
        |text: &str, max: u32| text.parse::<u32>().is_ok_and(|n| (1..=max).contains(&n));
    let cell = |text: &str| {
        text.split_once('.')
            .is_some_and(|(a, b)| number_in(a, 3) && number_in(b, 3))
    };
    match cite.split_at(1) {
        ("R", rest) => number_in(rest, 12),
        ("L", rest) => number_in(rest, 11),
        ("E" | "M", rest) => cell(rest),
        _ => false,
    }
}

fn build_step(
    raw: RawStep,
    previous_at: u64,
    scripts: &BTreeMap<String, String>,
) -> Result<Step, String> {
    let at = raw.at.unwrap_or(previous_at);
    if at < previous_at {
        return Err(format!(
            "`at = {at}` goes back in time (the previous step was at {previous_at})"
        ));
    }
    let mut actions = Vec::new();
    if let Some(body) = &raw.create {
        actions.push(Action::Create(item_body(body)?));
    }
    if let Some(body) = &raw.upsert {
        actions.push(Action::Upsert(item_body(body)?));
    }
    if let Some(body) = &raw.replace {
        actions.push(Action::Replace(item_body(body)?));
    }
    if let Some(id) = &raw.patch {
        let operations = match json(
            raw.operations
                .as_deref()
                .ok_or("`patch` needs `operations`")?,
            "operations",
        )? {
            Value::Array(ops) if !ops.is_empty() => ops,
            _ => return Err("`operations` is a non-empty JSON array".to_string()),
        };
        actions.push(Action::Patch {
            id: id.clone(),
            operations,
        });
    }
    if let Some(id) = &raw.delete {
        actions.push(Action::Delete(id.clone()));
    }
    let matching = raw
        .matching
        .as_deref()
        .map(|text| json_object(text, "match"))
        .transpose()?;
    if let Some(id) = &raw.read {
        actions.push(Action::Read {
            id: id.clone(),
            matching: matching.clone(),
        });
    }
    if let Some(sql) = &raw.query {
        let parameters = match raw.parameters.as_deref() {
            None => Vec::new(),
            Some(text) => match json(text, "parameters")? {
                Value::Array(params) => params,
                _ => return Err("`parameters` is a JSON array".to_string()),
            },
        };
        actions.push(Action::Query {
            sql: sql.clone(),
            parameters,
        });
    }
    if let Some(body) = &raw.create_container {
        actions.push(Action::CreateContainer(json_object(
            body,
            "create-container",
        )?));
    }
    if let Some(body) = &raw.replace_container {
        actions.push(Action::ReplaceContainer(json_object(
            body,
            "replace-container",
        )?));
    }
    if let Some(name) = &raw.read_container {
        if name != "c" {
            return Err(format!(
                "`read-container` names the case's container \"c\", not {name:?}"
            ));
        }
        actions.push(Action::ReadContainer {
            matching: matching.clone(),
        });
    }
    if let Some(text) = &raw.batch {
        actions.push(Action::Batch(crate::batch::parse(text)?));
    }
    if let Some(name) = &raw.sproc {
        let body = scripts.get(name).ok_or_else(|| {
            let known: Vec<&String> = scripts.keys().collect();
            format!("`sproc` names a script of the file's [scripts] ({known:?}), not {name:?}")
        })?;
        let args = match raw.args.as_deref() {
            Some(text) => crate::sproc::parse_args(text)?,
            None => Vec::new(),
        };
        actions.push(Action::Sproc(crate::sproc::Sproc {
            name: name.clone(),
            body: body.clone(),
            args,
        }));
    }
    if let Some(mode) = &raw.changes {
        actions.push(Action::Changes(changes(&raw, mode)?));
    } else if raw.from.is_some()
        || raw.purge.is_some()
        || raw.show.is_some()
        || raw.page_size.is_some()
    {
        return Err("`from`, `purge`, `show` and `page-size` belong to `changes`".to_string());
    }
    let action = match actions.len() {
        1 => actions.pop().expect("one action"),
        0 => return Err("a step needs one action (create, upsert, replace, patch, delete, read, query, create-container, replace-container, read-container, changes, batch, sproc)".to_string()),
        _ => return Err("a step has exactly one action".to_string()),
    };
    if raw.operations.is_some() && !matches!(action, Action::Patch { .. }) {
        return Err("`operations` belongs to `patch`".to_string());
    }
    if raw.parameters.is_some() && !matches!(action, Action::Query { .. }) {
        return Err("`parameters` belongs to `query`".to_string());
    }
    if raw.args.is_some() && !matches!(action, Action::Sproc(_)) {
        return Err("`args` belongs to `sproc`".to_string());
    }
    if raw.matching.is_some()
        && !matches!(action, Action::Read { .. } | Action::ReadContainer { .. })
    {
        return Err("`match` belongs to `read` and `read-container`".to_string());
    }
    let expect = Expect::parse(&raw.expect, action.kind())?;
    if matching.is_some() && expect != Expect::Visible {
        return Err("`match` only makes sense with expect = \"visible\"".to_string());
    }
    if let (Action::Changes(changes), Expect::Changes(entries)) = (&action, &expect) {
        check_entries(changes, entries)?;
    }
    Ok(Step { at, action, expect })
}

fn changes(raw: &RawStep, mode: &str) -> Result<Changes, String> {
    let mode = match mode {
        "latest-version" => FeedMode::LatestVersion,
        "all-versions" => FeedMode::AllVersions,
        _ => {
            return Err(format!(
                "`changes` is \"latest-version\" or \"all-versions\", not {mode:?}"
            ))
        }
    };
    let from = match raw.from.as_deref() {
        None => None,
        Some("now") => Some(FeedStart::Now),
        Some("beginning") if mode == FeedMode::LatestVersion => Some(FeedStart::Beginning),
        Some("beginning") => {
            return Err(
                "the all-versions feed starts only from now (`from = \"now\"`), never from the beginning"
                    .to_string(),
            )
        }
        Some(other) => {
            return Err(format!(
                "`from` is \"now\" or \"beginning\", not {other:?}"
            ))
        }
    };
    let purge = raw.purge.unwrap_or(false);
    if purge && mode != FeedMode::AllVersions {
        return Err(
            "`purge` waits for TTL deletes, which only the all-versions feed shows".to_string(),
        );
    }
    if raw.show.is_some() && mode != FeedMode::LatestVersion {
        return Err("`show` belongs to the latest-version feed".to_string());
    }
    if raw.page_size == Some(0) {
        return Err("`page-size` is at least 1".to_string());
    }
    Ok(Changes {
        mode,
        from,
        purge,
        show: raw.show.clone(),
        page_size: raw.page_size,
    })
}

/// The entries a change feed read may expect: `create a`, `replace a`,
/// `delete a`, `ttl-delete a @>=N` (all-versions); `a` or, with `show`,
/// `a <show>=<JSON>` (latest-version).
fn check_entries(changes: &Changes, entries: &[String]) -> Result<(), String> {
    for entry in entries {
        let ok = match changes.mode {
            FeedMode::AllVersions => {
                ttl_delete_bound(entry).is_some()
                    || ["create ", "replace ", "delete "]
                        .iter()
                        .any(|op| entry.strip_prefix(op).is_some_and(|id| !id.contains(' ')))
            }
            FeedMode::LatestVersion => match (&changes.show, entry.split_once(' ')) {
                (None, None) => true,
                (Some(show), Some((_, shown))) => shown
                    .strip_prefix(show.as_str())
                    .and_then(|v| v.strip_prefix('='))
                    .is_some_and(|v| serde_json::from_str::<Value>(v).is_ok()),
                _ => false,
            },
        };
        if !ok {
            return Err(match changes.mode {
                FeedMode::AllVersions => format!(
                    "an all-versions entry is `create ID`, `replace ID`, `delete ID` or `ttl-delete ID @>=INSTANT`, not {entry:?}"
                ),
                FeedMode::LatestVersion => format!(
                    "a latest-version entry is the item's id{}, not {entry:?}",
                    changes
                        .show
                        .as_ref()
                        .map(|s| format!(" and its `{s}`, e.g. `a {s}=2`"))
                        .unwrap_or_default()
                ),
            });
        }
    }
    Ok(())
}

fn json(text: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("`{what}` is not valid JSON ({e}): {text}"))
}

fn json_object(text: &str, what: &str) -> Result<Map<String, Value>, String> {
    match json(text, what)? {
        Value::Object(map) => Ok(map),
        _ => Err(format!("`{what}` is a JSON object: {text}")),
    }
}

fn item_body(text: &str) -> Result<Map<String, Value>, String> {
    let body = json_object(text, "item")?;
    match body.get("id") {
        Some(Value::String(id)) if !id.is_empty() => Ok(body),
        _ => Err(format!("an item body has a string \"id\": {text}")),
    }
}
