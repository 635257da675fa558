//! Where the fixtures come from: the copy compiled into the binary (see
//! `build.rs`), or a directory given with `--fixtures` (`cases/` and
//! `expectations/`), e.g. a checkout with cases being edited.

use crate::expectations::Expectations;
use crate::fixtures::{self, Case, FixtureError};
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixtureSource {
    /// The fixtures this binary was built with.
    Embedded,
    /// A fixtures directory.
    Dir(PathBuf),
}

impl FixtureSource {
    pub fn describe(&self) -> String {
        match self {
            FixtureSource::Embedded => "built in".to_string(),
            FixtureSource::Dir(dir) => dir.display().to_string(),
        }
    }

    /// Every case, in file-name order.
    pub fn cases(&self) -> Result<Vec<Case>, FixtureError> {
        match self {
            FixtureSource::Embedded => fixtures::load_texts(
                embedded_files("cases/")
                    .map(|(name, text)| (PathBuf::from(name), text.to_string())),
            ),
            FixtureSource::Dir(dir) => fixtures::load_dir(&dir.join("cases")),
        }
    }

    /// Known failures: `NAME` is `expectations/NAME.toml` of this source;
    /// anything with a path separator or a `.toml` ending is a file.
    pub fn expectations(&self, name_or_file: &str) -> Result<Expectations, String> {
        let is_file = name_or_file.contains(['/', '\\']) || name_or_file.ends_with(".toml");
        if is_file {
            return Expectations::load(Path::new(name_or_file));
        }
        match self {
            FixtureSource::Dir(dir) => Expectations::load(&Expectations::locate(name_or_file, dir)),
            FixtureSource::Embedded => {
                let wanted = format!("expectations/{name_or_file}.toml");
                let (_, text) = embedded_files("expectations/")
                    .find(|(name, _)| *name == wanted)
                    .ok_or_else(|| {
                        format!(
                            "no built-in expectations named {name_or_file:?} (built in: {}); give a FILE",
                            expectation_names().join(", ")
                        )
                    })?;
                Expectations::parse(text).map_err(|e| format!("{wanted} (built in): {e}"))
            }
        }
    }
}

/// The names of the built-in expectations lists.
pub fn expectation_names() -> Vec<String> {
    embedded_files("expectations/")
        .filter_map(|(name, _)| {
            name.strip_prefix("expectations/")?
                .strip_suffix(".toml")
                .map(str::to_string)
        })
        .collect()
}
fn embedded_files(prefix: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    embedded::FILES
        .iter()
        .copied()
        .filter(move |(name, _)| name.starts_with(prefix))
}
