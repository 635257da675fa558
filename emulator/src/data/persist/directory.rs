//! The data directory (`--data-dir`): its lock, its files, and what is read
//! back from them at start.
//!
//! Files, by generation `g` (8 decimal digits):
//! - `snapshot-g.bin`: the whole state when generation `g` began, written to
//!   a `.tmp` file, synced and renamed, so it is either whole or absent;
//! - `log-g.bin`: the frames committed since (append-only);
//! - `LOCK`: held with `flock` while an emulator uses the directory.
//!
//! The state is the newest snapshot (none: empty) followed by every log of
//! its generation or later, in order. A log may end with a torn frame (the
//! process died in a write): reading stops at the first short or corrupt
//! frame, what follows is copied aside to `dropped-*.bin` and cut off, and
//! the caller is told, so that nothing is lost silently.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const LOCK_FILE: &str = "LOCK";

/// A data directory held by this process (its lock is released on drop).
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    _lock: File,
}

/// The files to read back at start, in order.
#[derive(Debug, Default)]
pub struct Plan {
    /// The newest snapshot: (generation, path).
    pub snapshot: Option<(u64, PathBuf)>,
    /// The logs to replay over it, in order: (generation, path).
    pub logs: Vec<(u64, PathBuf)>,
}

/// Bytes set aside at start because they were not whole, checksummed frames.
#[derive(Debug, Clone)]
pub struct Dropped {
    pub file: PathBuf,
    /// Where the readable part of `file` ended.
    pub at: u64,
    pub bytes: u64,
    pub moved_to: PathBuf,
}

impl DataDir {
    /// Creates the directory if needed and takes its lock; refuses when
    /// another process holds it.
    pub fn open(path: &Path) -> io::Result<DataDir> {
        fs::create_dir_all(path)
            .map_err(|e| annotate(e, path, "cannot create the data directory"))?;
        let lock_path = path.join(LOCK_FILE);
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| annotate(e, &lock_path, "cannot open"))?;
        if !try_lock(&lock)? {
            let holder = fs::read_to_string(&lock_path).unwrap_or_default();
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!(
                    "the data directory {} is in use by another emulator (process {}): stop it, \
                     or give this one another --data-dir",
                    path.display(),
                    holder.trim()
                ),
            ));
        }
        lock.set_len(0)?;
        write!(lock, "{}", std::process::id())?;
        Ok(DataDir {
            path: path.to_path_buf(),
            _lock: lock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn log_path(&self, generation: u64) -> PathBuf {
        self.path.join(format!("log-{generation:08}.bin"))
    }

    pub fn snapshot_path(&self, generation: u64) -> PathBuf {
        self.path.join(format!("snapshot-{generation:08}.bin"))
    }

    /// The generations of the files named `{prefix}-g.bin`, ascending.
    fn generations(&self, prefix: &str) -> io::Result<Vec<u64>> {
        let mut found = Vec::new();
        for entry in fs::read_dir(&self.path)? {
            let name = entry?.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(g) = name
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix('-'))
                .and_then(|rest| rest.strip_suffix(".bin"))
                .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse().ok())
            {
                found.push(g);
            }
        }
        found.sort_unstable();
        Ok(found)
    }

    /// What to read back: the newest snapshot and the logs from its
    /// generation on. Files a compaction left behind (older generations,
    /// temporary files) are removed.
    pub fn plan(&self) -> io::Result<Plan> {
        self.remove_temporary_files()?;
        let snapshot = self
            .generations("snapshot")?
            .last()
            .map(|&g| (g, self.snapshot_path(g)));
        let base = snapshot.as_ref().map_or(0, |s| s.0);
        let mut logs = Vec::new();
        for g in self.generations("log")? {
            if g < base {
                fs::remove_file(self.log_path(g))?;
            } else {
                logs.push((g, self.log_path(g)));
            }
        }
        Ok(Plan { snapshot, logs })
    }

    /// Copies `path` from byte `at` to a `dropped-*` file beside it and cuts
    /// it there (a file cut at 0 is removed): the end of a log that is not
    /// whole frames, and any log after it.
    pub fn set_aside(&self, path: &Path, at: u64) -> io::Result<Dropped> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("log");
        let moved_to = self.path.join(format!("dropped-{stamp}-at-{at}-{name}"));
        let mut input = File::open(path)?;
        input.seek(SeekFrom::Start(at))?;
        let mut out = File::create(&moved_to)?;
        let bytes = io::copy(&mut input, &mut out)?;
        out.sync_all()?;
        if at == 0 {
            fs::remove_file(path)?;
        } else {
            let file = OpenOptions::new().write(true).open(path)?;
            file.set_len(at)?;
            file.sync_all()?;
        }
        self.sync()?;
        Ok(Dropped {
            file: path.to_path_buf(),
            at,
            bytes,
            moved_to,
        })
    }

    fn remove_temporary_files(&self) -> io::Result<()> {
        for entry in fs::read_dir(&self.path)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "tmp") {
                fs::remove_file(&path)?;
            }
        }
        Ok(())
    }

    /// Makes the directory's entries (created, renamed, removed files) durable.
    pub fn sync(&self) -> io::Result<()> {
        File::open(&self.path)?.sync_all()
    }

    /// Removes the snapshots and logs of generations before `generation`.
    pub fn remove_before(&self, generation: u64) -> io::Result<()> {
        for g in self.generations("snapshot")? {
            if g < generation {
                fs::remove_file(self.snapshot_path(g))?;
            }
        }
        for g in self.generations("log")? {
            if g < generation {
                fs::remove_file(self.log_path(g))?;
            }
        }
        self.sync()
    }
}

fn annotate(e: io::Error, path: &Path, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// `flock(LOCK_EX | LOCK_NB)`: `false` when another process holds it. The
/// kernel releases it when the process ends, however it ends. (`File::try_lock`
/// needs Rust 1.89; the workspace supports 1.80.)
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this function borrows; no memory is passed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(error)
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cosmos-emulator-dir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let path = scratch("lock");
        let first = DataDir::open(&path).unwrap();
        let refused = DataDir::open(&path).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("is in use by another emulator"),
            "{refused}"
        );
        drop(first);
        DataDir::open(&path).unwrap();
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_cut_log_keeps_its_whole_frames_and_the_rest_is_set_aside() {
        let path = scratch("torn");
        let dir = DataDir::open(&path).unwrap();
        fs::write(dir.log_path(0), b"0123456789").unwrap();
        let dropped = dir.set_aside(&dir.log_path(0), 4).unwrap();
        assert_eq!(fs::read(dir.log_path(0)).unwrap(), b"0123");
        assert_eq!(fs::read(&dropped.moved_to).unwrap(), b"456789");
        assert_eq!(dropped.bytes, 6);
        fs::write(dir.log_path(1), b"later").unwrap();
        let whole = dir.set_aside(&dir.log_path(1), 0).unwrap();
        assert!(!dir.log_path(1).exists());
        assert_eq!(fs::read(&whole.moved_to).unwrap(), b"later");
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn the_newest_snapshot_and_the_logs_from_its_generation_are_read() {
        let path = scratch("generations");
        let dir = DataDir::open(&path).unwrap();
        for g in [0, 1, 2] {
            fs::write(dir.log_path(g), b"x").unwrap();
        }
        fs::write(dir.snapshot_path(1), b"x").unwrap();
        fs::write(path.join("snapshot-00000002.tmp"), b"half").unwrap();
        let plan = dir.plan().unwrap();
        assert_eq!(plan.snapshot.as_ref().map(|s| s.0), Some(1));
        let gens: Vec<u64> = plan.logs.iter().map(|l| l.0).collect();
        assert_eq!(gens, [1, 2]);
        assert!(!dir.log_path(0).exists(), "older than the snapshot");
        assert!(!path.join("snapshot-00000002.tmp").exists());
        fs::remove_dir_all(&path).unwrap();
    }
}
