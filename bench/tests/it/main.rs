//! The bench crate's integration tests, one binary (`cargo test -p
//! cosmos-bench --test it`), one module per measurement they check.

use std::path::PathBuf;

mod direct;
mod persistence;
mod plan_query;

/// The emulator binary the measurements run: `COSMOS_EMULATOR_BIN`, or
/// `target/<profile>/cosmos-emulator` next to this test's own directory
/// (`cargo test --workspace` builds it).
pub fn emulator_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("COSMOS_EMULATOR_BIN") {
        return PathBuf::from(path);
    }
    // target/<profile>/deps/it-<hash> → target/<profile>/cosmos-emulator
    let exe = std::env::current_exe().expect("the test knows where it is");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let binary = profile_dir.join("cosmos-emulator");
    assert!(
        binary.is_file(),
        "{} is missing: build it first (cargo build -p cosmos-emulator, or cargo test --workspace), \
         or name one with COSMOS_EMULATOR_BIN",
        binary.display()
    );
    binary
}
