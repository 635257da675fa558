//! Where the data is kept, if anywhere. In order: `--data-dir`; the path
//! variables (`COSMOS_EMULATOR_DATA_DIR`, `DATA_PATH`);
//! `AZURE_COSMOS_EMULATOR_ENABLE_DATA_PERSISTENCE` (`true` asks for a
//! directory without naming one, `false` for none);
//! `COSMOS_EMULATOR_DEFAULT_DATA_DIR` (no flag: the directory a container
//! image persists to by default, which `...ENABLE_DATA_PERSISTENCE=false`
//! turns off without a conflict, as Testcontainers for Python always sends
//! it); else memory only. Every choice the caller did not spell out is
//! said in a note.

use std::path::PathBuf;

use super::vars::{
    flag_or_vars, Var, COSMOS_EMULATOR_DATA_DIR, COSMOS_EMULATOR_DEFAULT_DATA_DIR, DATA_PATH,
    ENABLE_DATA_PERSISTENCE,
};
use super::{Env, Invalid};

/// The data directory, from the flag or the environment; `notes` says why
/// when the environment chose it without naming it (or turned the default off).
pub fn choose(
    flag: Option<PathBuf>,
    env: Env,
    notes: &mut Vec<String>,
) -> Result<Option<PathBuf>, Invalid> {
    if flag.is_some() {
        return Ok(flag);
    }
    let path = flag_or_vars(
        None,
        "data-dir",
        env,
        &[COSMOS_EMULATOR_DATA_DIR, DATA_PATH],
        |v| Ok(PathBuf::from(&v.text)),
    )?;
    let persist = Var::read(env, ENABLE_DATA_PERSISTENCE)?
        .map(|v| v.boolean())
        .transpose()?;
    let fallback = Var::read(env, COSMOS_EMULATOR_DEFAULT_DATA_DIR)?.map(|v| PathBuf::from(v.text));
    match (path, persist) {
        (Some(path), Some(false)) => Err(Invalid(format!(
            "{} asks to keep the data and {ENABLE_DATA_PERSISTENCE}=false not to: unset one of them",
            path.source
        ))),
        (Some(path), _) => Ok(Some(path.value)),
        (None, Some(false)) => {
            if let Some(dir) = fallback {
                notes.push(format!(
                    "keeping the data in memory only: {ENABLE_DATA_PERSISTENCE}=false turns off \
                     the default data directory ({COSMOS_EMULATOR_DEFAULT_DATA_DIR}={})",
                    dir.display()
                ));
            }
            Ok(None)
        }
        (None, Some(true)) => {
            let (dir, why) = match fallback {
                Some(dir) => (dir, COSMOS_EMULATOR_DEFAULT_DATA_DIR),
                None => (
                    default_data_dir(env).ok_or_else(|| {
                        Invalid(format!(
                            "{ENABLE_DATA_PERSISTENCE}=true needs a directory: set \
                             {COSMOS_EMULATOR_DATA_DIR} or {DATA_PATH} (none of XDG_DATA_HOME, \
                             HOME and LOCALAPPDATA is set to find the default)"
                        ))
                    })?,
                    "the user's data directory",
                ),
            };
            notes.push(format!(
                "{ENABLE_DATA_PERSISTENCE}=true: keeping the data in {} ({why}; set \
                 {COSMOS_EMULATOR_DATA_DIR} to choose)",
                dir.display()
            ));
            Ok(Some(dir))
        }
        (None, None) => {
            if let Some(dir) = &fallback {
                notes.push(format!(
                    "keeping the data in {}, the default data directory \
                     ({COSMOS_EMULATOR_DEFAULT_DATA_DIR}): no --data-dir, \
                     {COSMOS_EMULATOR_DATA_DIR} or {DATA_PATH} names another \
                     ({ENABLE_DATA_PERSISTENCE}=false keeps it in memory only)",
                    dir.display()
                ));
            }
            Ok(fallback)
        }
    }
}

/// `cosmos-emulator` in the user's data directory: `$XDG_DATA_HOME`, else
/// `$HOME/.local/share` (also on macOS), else `%LOCALAPPDATA%` (Windows).
pub fn default_data_dir(env: Env) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = set("XDG_DATA_HOME")
        .or_else(|| set("HOME").map(|home| home.join(".local").join("share")))
        .or_else(|| set("LOCALAPPDATA"))?;
    Some(base.join("cosmos-emulator"))
}
