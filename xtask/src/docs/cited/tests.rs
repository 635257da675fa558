//! The checker on a small made-up repository, and on this one.

use super::repo::mdbook_id;
use super::*;

/// `..` paths are spelled in pieces: this file is scanned too, and from
/// here they would climb into xtask/.
const UP: &str = "..";

/// A small repository: a Rust crate `app`, a Python package `py`, a
/// guide page with headings and a README with a section.
fn repo() -> Repo {
    let files = [
        "Cargo.toml",
        "README.md",
        "app/Cargo.toml",
        "app/src/lib.rs",
        "app/src/http/mod.rs",
        "app/src/http/items.rs",
        "app/src/store/mod.rs",
        "app/src/store/container/mod.rs",
        "app/tests/it/main.rs",
        "app/tests/it/fuzz.rs",
        "guide/rules.md",
        "py/pyproject.toml",
        "py/src/pkg/__init__.py",
        "py/tests/test_pkg.py",
    ];
    Repo::new(
        files.into_iter(),
        "/target\n/guide/book/\nnode_modules/\n*.snap.new\n",
    )
}

fn read(path: &str) -> Option<String> {
    match path {
        "README.md" => Some("# app\n\n## Test clock protocol\n".to_string()),
        "guide/rules.md" => Some(
            "# Rules\n\n## R7 Remove an item's TTL {#r7}\n\n## The tables\n\n```\n# Not a heading\n```\n"
                .to_string(),
        ),
        _ => None,
    }
}

/// The dead citations of `text` as the file `file`, as reported.
fn dead(file: &str, text: &str) -> Vec<String> {
    let syntax = syntax_of(file, text).expect("a file the checker reads");
    repo()
        .dead_citations(file, text, syntax, &read)
        .into_iter()
        .map(|(line, cited, why)| format!("{file}:{line}: {cited}: {why}"))
        .collect()
}

const NONE: Vec<String> = Vec::new();

#[test]
fn paths_resolve_from_the_root_the_file_and_the_package() {
    // From the root, from the file's directory, from the crate's src/
    // and root, from a Python package's src/, and with `..`.
    let text = format!(
        "// app/src/store/mod.rs, container/mod.rs, store/container/mod.rs,\n\
         // tests/it/fuzz.rs, http/mod.rs, {UP}/store/mod.rs, app/tests/it/\n"
    );
    assert_eq!(dead("app/src/store/mod.rs", &text), NONE);
    // From anywhere, a file in any package's src/.
    assert_eq!(
        dead("guide/rules.md", "The maps: store/mod.rs, store/gone.rs.\n"),
        ["guide/rules.md:1: store/gone.rs: no such file"]
    );
    let text = format!("# see pkg/__init__.py and {UP}/src/pkg/\n");
    assert_eq!(dead("py/tests/test_pkg.py", &text), NONE);
}

#[test]
fn a_dead_path_is_named_with_its_file_and_line() {
    let text = "//! Items.\n//! The maps (`store/container.rs`) and the fuzz tests\n\
                //! (tests/fuzz.rs); app/src/gone.rs. Ok: data/store/mod.rs.\n";
    assert_eq!(
        dead("app/src/http/items.rs", text),
        [
            "app/src/http/items.rs:2: store/container.rs: no such file",
            "app/src/http/items.rs:3: tests/fuzz.rs: no such file",
            "app/src/http/items.rs:3: app/src/gone.rs: no such file",
        ]
    );
    assert_eq!(
        dead("Cargo.toml", "[x]\n# The guide (guide/gone.md).\n"),
        ["Cargo.toml:2: guide/gone.md: no such file"]
    );
    assert_eq!(
        dead(
            "guide/rules.md",
            "# Rules\n\nSee [the tests](../app/tests/gone.rs).\n"
        ),
        ["guide/rules.md:3: ../app/tests/gone.rs: no such file"]
    );
}

#[test]
fn only_comments_and_prose_are_read() {
    // Paths in code are relative to where it runs; in a fenced block,
    // to the reader's project.
    let rust = "let p = dir.join(\"app/src/gone.rs\"); // but app/src/lib.rs\n\
                let q = r#\"app/gone.rs // app/gone.rs\"#; let c = '\"'; /* app/x.rs */\n";
    assert_eq!(
        dead("app/src/lib.rs", rust),
        ["app/src/lib.rs:2: app/x.rs: no such file"]
    );
    let js = "const u = 'app/gone.js'; // app/src/gone.js\nconst t = `a\n// app/gone2.js`;\n";
    assert_eq!(
        dead("app/src/ui.js", js),
        ["app/src/ui.js:1: app/src/gone.js: no such file"]
    );
    let python = "\"\"\"Tests (app/src/gone.py).\"\"\"\nx = 'app/ok' # app/gone.py\n";
    assert_eq!(
        dead("py/tests/test_pkg.py", python),
        [
            "py/tests/test_pkg.py:1: app/src/gone.py: no such file",
            "py/tests/test_pkg.py:2: app/gone.py: no such file",
        ]
    );
    let markdown = "Run it:\n\n```sh\ncp app/gone.toml .\n```\n\nThen app/gone.md.\n";
    assert_eq!(
        dead("README.md", markdown),
        ["README.md:7: app/gone.md: no such file"]
    );
}

#[test]
fn other_projects_paths_placeholders_and_build_outputs_are_not_checked() {
    let text = "# _execution_context/aggregators.py, the SDK's tests/test_crud.py,\n\
                # articles/cosmos-db/nosql/time-to-live.md, vercel/cosmosdb-server/src/x.ts,\n\
                # target/debug/app, guide/book/index.html, app/NAME.toml, app/{a,b}.rs,\n\
                # https://example.com/app/src/gone.rs, /app/src/gone.rs, and/or, R7/R8,\n\
                # guide/rules.{md,html}, app/tests/<n>-<area>.rs, PATCH app/a, dbs/{db}/colls\n\
                # your project's `app/expectations.toml`\n";
    assert_eq!(dead("Cargo.toml", text), NONE);
    // A Python test cited in a crate whose tests are Rust: the SDK's.
    assert_eq!(dead("app/src/lib.rs", "//! tests/test_crud.py:809\n"), NONE);
}

#[test]
fn nothing_may_cite_the_documents_outside_the_repository() {
    let shared = format!("{UP}/{}/RULES.md", "shared");
    let text = format!("// the rules ({shared}), R7\n");
    assert_eq!(
        dead("app/src/lib.rs", &text),
        [format!(
            "app/src/lib.rs:1: {shared}: the background documents are not in the repository"
        )]
    );
    let text = format!("# the seeds: {}/seeds/\n", "shared");
    assert_eq!(
        dead("app/Cargo.toml", &text),
        [format!(
            "app/Cargo.toml:1: {}/seeds/: the background documents are not in the repository",
            "shared"
        )]
    );
    let text = format!("# {UP}/{UP}/{UP}/elsewhere.md\n");
    assert_eq!(
        dead("app/Cargo.toml", &text),
        [format!(
            "app/Cargo.toml:1: {UP}/{UP}/{UP}/elsewhere.md: a path outside the repository"
        )]
    );
    let name = format!("{}.md", "PROTOCOL");
    assert_eq!(
        dead(
            "app/src/lib.rs",
            &format!("//! The wire ({name}). README.md\n")
        ),
        [format!(
            "app/src/lib.rs:1: {name}: no such document in this repository"
        )]
    );
}

#[test]
fn fragments_and_sections_must_be_headings_of_the_page() {
    let ok = "// guide/rules.md#r7, guide/rules.md#the-tables, `guide/rules.md`, \"The tables\"\n\
              // (README, \"Test clock protocol\"), the SDK's README, \"Anything\"\n";
    assert_eq!(dead("app/src/lib.rs", ok), NONE);
    let text = "// guide/rules.md#r13, guide/rules.md#not-a-heading, (README, \"Clock\")\n";
    assert_eq!(
        dead("app/src/http/mod.rs", text),
        [
            "app/src/http/mod.rs:1: guide/rules.md#r13: no such heading in guide/rules.md",
            "app/src/http/mod.rs:1: guide/rules.md#not-a-heading: no such heading in guide/rules.md",
            "app/src/http/mod.rs:1: README, \"Clock\": no such heading in README.md",
        ]
    );
}

#[test]
fn headings_get_mdbooks_ids() {
    assert_eq!(mdbook_id("R5 Invisible at once"), "r5-invisible-at-once");
    assert_eq!(mdbook_id("The `etag` (a header)"), "the-etag-a-header");
}

/// The repository itself: every path it cites exists.
#[test]
fn every_path_the_repository_cites_exists() {
    let problems = check(&crate::root()).unwrap();
    assert!(
        problems.is_empty(),
        "{} dead citation(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
