//! No file imports itself around a loop, in the emulator, the suite and
//! the bench: the test over the repository's sources, which lists every
//! cycle with the imports that close it (`imports.rs` draws the graph and
//! finds them). No cycle is allowed: where files share an item, it moves
//! to a file below them (`docs/src/architecture.md`, invariant 9).

use super::paths::EMULATOR_SRC;
use super::{imports, rust_sources};

/// No file imports itself around a loop: each crate's library is a graph
/// of files without cycles, so any file can be read (and tested) knowing
/// only the files below it. The failure lists every cycle, file by file.
#[test]
fn no_file_imports_itself_around_a_loop() {
    let mut found = Vec::new();
    for src in [EMULATOR_SRC, "conformance/src/", "bench/src/"] {
        let files: Vec<imports::File> = rust_sources(src)
            .into_iter()
            .map(|s| imports::File {
                code: s.code(),
                path: s.path[src.len()..].to_string(),
            })
            .collect();
        for cycle in imports::cycles(&files) {
            let named: Vec<String> = cycle.files.iter().map(|f| format!("{src}{f}")).collect();
            found.push(format!(
                "{} files: {}\n    {}",
                named.len(),
                named.join(", "),
                cycle.imports.join("\n    ")
            ));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles (break each by moving what they share down):\n{}",
        found.join("\n")
    );
}
