//! The Python wheel `cosmos-emulator` (packages/python): built by maturin
//! with `bin` bindings; tested in a fresh virtualenv.

use std::path::{Path, PathBuf};

use super::Build;

/// Builds the wheel into `build.out`; returns its path.
pub fn build(_build: &Build) -> Result<PathBuf, String> {
    Err("the Python package is not written yet".into())
}

/// Installs the wheel into a fresh virtualenv and runs packages/python's tests.
pub fn test(_build: &Build, _wheel: &Path) -> Result<(), String> {
    Err("the Python package is not written yet".into())
}
