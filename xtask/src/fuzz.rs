//! `cargo xtask fuzz [--cases N] [--seed S]`: the property-based fuzz tests
//! of the emulator (`emulator/tests/it/fuzz.rs`), optimised and with many more
//! cases than `cargo xtask test` runs, from a fresh seed unless one is
//! given. The seed is printed first, so that a failure can be replayed.

use std::process::ExitCode;

use crate::{cargo, flag};

/// Cases per property when not told: about six minutes on two cores
/// (20,000 took 13 minutes on a busy machine).
const DEFAULT_CASES: u64 = 10_000;

pub fn run(args: &[String]) -> Result<ExitCode, String> {
    let number = |name: &str| -> Result<Option<u64>, String> {
        flag(args, name)
            .map(|v| v.parse::<u64>().map_err(|e| format!("{name} {v:?}: {e}")))
            .transpose()
    };
    let cases = number("--cases")?.unwrap_or(DEFAULT_CASES);
    let seed = match number("--seed")? {
        Some(seed) => seed,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_nanos() as u64,
    };
    eprintln!("== xtask fuzz: {cases} cases a property, seed {seed} (replay: cargo xtask fuzz --cases {cases} --seed {seed})");
    let status = cargo()
        .args([
            "test",
            "--release",
            "-p",
            "cosmos-emulator",
            "--test",
            "it",
            "--",
            "fuzz::",
            "--test-threads=2",
        ])
        .env("FUZZ_CASES", cases.to_string())
        .env("FUZZ_SEED", seed.to_string())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        eprintln!("xtask fuzz: a property failed with seed {seed}; proptest printed the smallest input above: add it to emulator/tests/it/hostile.rs");
        ExitCode::FAILURE
    })
}
