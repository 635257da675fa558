//! Compiles the fixtures (`../fixtures/cases` and `../fixtures/expectations`)
//! into the binary, so that a copied or `cargo install`ed
//! `cosmos-conformance` runs from any directory. `include_str!` makes rustc
//! track each file; the directories are watched for added or removed files.
//! (include_dir would do the same, but tracks files only on nightly.)

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let fixtures = manifest.join("../fixtures");
    let mut out =
        String::from("/// Every fixture file: its path under `fixtures/` and its text.\n");
    out.push_str("pub static FILES: &[(&str, &str)] = &[\n");
    for dir in ["cases", "expectations"] {
        let dir_path = fixtures.join(dir);
        println!("cargo:rerun-if-changed={}", dir_path.display());
        for file in toml_files(&dir_path) {
            let name = file.file_name().expect("a file").to_string_lossy();
            let absolute = file.canonicalize().expect("the fixture exists");
            writeln!(
                out,
                "    ({:?}, include_str!({:?})),",
                format!("{dir}/{name}"),
                absolute.display().to_string()
            )
            .expect("writing to a string");
        }
    }
    out.push_str("];\n");
    let target =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("embedded.rs");
    std::fs::write(&target, out).expect("OUT_DIR is writable");
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    // As the loader orders them (`fixtures::load::file_order`): by the
    // number the name starts with, so that `10-...` comes after `9-...`.
    files.sort_by_key(|path| {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let digits = name.len() - name.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        (name[..digits].parse::<u64>().unwrap_or(u64::MAX), name)
    });
    files
}
