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
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::frame::Frames;

const LOCK_FILE: &str = "LOCK";

/// A data directory held by this process (its lock is released on drop).
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    _lock: File,
}

/// What was read back at start.
#[derive(Debug, Default)]
pub struct Recovered {
    /// The newest snapshot's frames' payloads, and its generation.
    pub snapshot: Option<(u64, Vec<u8>)>,
    /// The logs to replay over it, in order: (generation, whole readable part).
    pub logs: Vec<(u64, Vec<u8>)>,
    /// What was cut off as torn or corrupt, for the operator.
    pub dropped: Vec<Dropped>,
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

    /// Reads the state back: the newest snapshot and the logs after it.
    /// A torn or corrupt log tail is moved aside (see the module comment);
    /// a damaged snapshot is an error, as nothing after it could be trusted.
    pub fn recover(&self) -> io::Result<Recovered> {
        self.remove_temporary_files()?;
        let mut recovered = Recovered::default();
        let base = match self.generations("snapshot")?.last() {
            Some(&g) => {
                let path = self.snapshot_path(g);
                let data = fs::read(&path).map_err(|e| annotate(e, &path, "cannot read"))?;
                let mut frames = Frames::new(&data);
                frames.by_ref().for_each(drop);
                if frames.position() != data.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "the snapshot {} is damaged at byte {} of {}: the emulator cannot tell \
                             what the directory held. Move the directory aside to start empty, \
                             or restore it from a copy.",
                            path.display(),
                            frames.position(),
                            data.len()
                        ),
                    ));
                }
                recovered.snapshot = Some((g, data));
                g
            }
            None => 0,
        };
        let mut torn = false;
        for g in self.generations("log")? {
            let path = self.log_path(g);
            if g < base {
                // Left over from a compaction that stopped before its cleanup.
                fs::remove_file(&path)?;
                continue;
            }
            if torn {
                // After a corrupt frame, later frames cannot be applied.
                let dropped = self.set_aside(&path, 0)?;
                recovered.dropped.push(dropped);
                continue;
            }
            let mut data = fs::read(&path).map_err(|e| annotate(e, &path, "cannot read"))?;
            let mut frames = Frames::new(&data);
            frames.by_ref().for_each(drop);
            let readable = frames.position();
            if readable != data.len() {
                recovered
                    .dropped
                    .push(self.set_aside(&path, readable as u64)?);
                data.truncate(readable);
                torn = true;
            }
            recovered.logs.push((g, data));
        }
        Ok(recovered)
    }

    /// Copies `path` from byte `at` to a `dropped-*` file beside it and cuts
    /// it there (a file cut at 0 is removed).
    fn set_aside(&self, path: &Path, at: u64) -> io::Result<Dropped> {
        let data = fs::read(path)?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("log");
        let moved_to = self.path.join(format!("dropped-{stamp}-at-{at}-{name}"));
        let tail = &data[at as usize..];
        let mut out = File::create(&moved_to)?;
        out.write_all(tail)?;
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
            bytes: tail.len() as u64,
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
    use crate::persist::frame;

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
    fn a_torn_tail_is_set_aside_and_later_logs_with_it() {
        let path = scratch("torn");
        let dir = DataDir::open(&path).unwrap();
        let mut log = Vec::new();
        frame::encode(b"first", &mut log);
        frame::encode(b"second", &mut log);
        let whole = log.len();
        log.truncate(whole - 3);
        fs::write(dir.log_path(0), &log).unwrap();
        fs::write(dir.log_path(1), b"later").unwrap();
        let recovered = dir.recover().unwrap();
        assert_eq!(recovered.logs.len(), 1);
        assert_eq!(recovered.logs[0].1.len(), frame::HEADER_BYTES + 5);
        assert_eq!(recovered.dropped.len(), 2);
        assert_eq!(recovered.dropped[0].bytes as usize, whole - 3 - 13);
        assert_eq!(
            fs::metadata(dir.log_path(0)).unwrap().len(),
            13,
            "cut at the last whole frame"
        );
        assert!(!dir.log_path(1).exists());
        assert!(recovered.dropped.iter().all(|d| d.moved_to.exists()));
        // Read again: nothing more to drop.
        assert!(dir.recover().unwrap().dropped.is_empty());
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn the_newest_snapshot_and_the_logs_from_its_generation_are_read() {
        let path = scratch("generations");
        let dir = DataDir::open(&path).unwrap();
        let mut one = Vec::new();
        frame::encode(b"x", &mut one);
        for g in [0, 1, 2] {
            fs::write(dir.log_path(g), &one).unwrap();
        }
        fs::write(dir.snapshot_path(1), &one).unwrap();
        fs::write(path.join("snapshot-00000002.tmp"), b"half").unwrap();
        let recovered = dir.recover().unwrap();
        assert_eq!(recovered.snapshot.as_ref().map(|s| s.0), Some(1));
        let gens: Vec<u64> = recovered.logs.iter().map(|l| l.0).collect();
        assert_eq!(gens, [1, 2]);
        assert!(!dir.log_path(0).exists(), "older than the snapshot");
        assert!(!path.join("snapshot-00000002.tmp").exists());
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_damaged_snapshot_is_an_error() {
        let path = scratch("snapshot");
        let dir = DataDir::open(&path).unwrap();
        let mut data = Vec::new();
        frame::encode(b"state", &mut data);
        data[10] ^= 1;
        fs::write(dir.snapshot_path(3), &data).unwrap();
        let error = dir.recover().unwrap_err();
        assert!(error.to_string().contains("is damaged"), "{error}");
        fs::remove_dir_all(&path).unwrap();
    }
}
