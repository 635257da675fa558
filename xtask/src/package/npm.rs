//! The npm packages `cosmos-emulator` and `cosmos-emulator-<os>-<cpu>`
//! (packages/npm): packed with `npm pack`; tested in a fresh npm project.

use std::path::{Path, PathBuf};

use super::Build;

/// Packs the main package and this platform's package into `build.out`;
/// returns their paths.
pub fn build(_build: &Build) -> Result<Vec<PathBuf>, String> {
    Err("the npm packages are not written yet".into())
}

/// Installs the tarballs into a fresh project and runs packages/npm's tests.
pub fn test(_build: &Build, _tarballs: &[PathBuf]) -> Result<(), String> {
    Err("the npm packages are not written yet".into())
}
