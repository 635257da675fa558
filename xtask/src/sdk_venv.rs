//! The Python SDK's virtualenv (`target/sdk-venv`), which the SDK tests
//! (`cargo xtask test`), the guide's snippets (`cargo xtask docs`) and the
//! release's smoke test (`cargo xtask dist --run`) share.

use std::path::{Path, PathBuf};

use crate::{root, target_dir};

/// The virtualenv's python, made and filled on first use; pip is run every
/// time so that a changed requirements file takes effect (it is quick when
/// nothing changed).
pub(crate) fn python() -> Result<PathBuf, String> {
    let venv = target_dir().join("sdk-venv");
    // In Scripts on Windows (the release workflow's runner, dist --run).
    let python = crate::host::venv_bin(&venv, "python");
    if !python.exists() {
        crate::step(
            "test",
            "create the Python virtualenv",
            &mut crate::host::new_venv(&venv),
        )?;
    }
    let requirements: &Path = &root().join("sdk-tests/python/requirements.txt");
    crate::step(
        "test",
        "install the Python SDK: pip install -r sdk-tests/python/requirements.txt",
        crate::pip_install(&python).arg("-r").arg(requirements),
    )?;
    Ok(python)
}
