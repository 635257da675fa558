//! The write-ahead log: store operations append their records here, and a
//! commit writes them to the current log file as one frame before the
//! operation is acknowledged.
//!
//! - Every commit is `write()`n to the file under the store's write lock, so
//!   the file holds the operations in the order they changed the store, and
//!   an acknowledged write survives the process being killed.
//! - Power-loss durability is the `--sync` choice ([`SyncMode`]): `always`
//!   waits for an `fdatasync` covering the commit before the response (one
//!   sync serves every writer waiting at the time), `periodic` syncs once a
//!   second in the background, `never` leaves it to the operating system.
//! - A commit that cannot be written (a full disk) fails the journal: the
//!   request that made it, and every later write, are refused with 503.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::Duration;

use super::directory::DataDir;
use super::frame;

/// When a committed write is synced to the disk (`--sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Before the response: survives power loss.
    Always,
    /// Once a second: a power loss can lose the last second.
    #[default]
    Periodic,
    /// When the operating system writes back.
    Never,
}

/// How often `periodic` syncs.
const PERIODIC_SYNC: Duration = Duration::from_secs(1);

/// What the request being served committed (see [`Journal::track`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Committed {
    #[default]
    Nothing,
    /// Written up to this position of the journal (bytes ever written).
    Through(u64),
    /// The commit could not be written.
    Failed,
}

tokio::task_local! {
    static COMMITTED: Cell<Committed>;
}

#[derive(Debug)]
struct Appender {
    file: Arc<File>,
    generation: u64,
    /// Records of the operation in progress, not yet committed.
    pending: Vec<u8>,
    frame: Vec<u8>,
}

#[derive(Debug)]
pub struct Journal {
    dir: DataDir,
    mode: SyncMode,
    appender: Mutex<Appender>,
    /// Bytes ever committed (all generations): a commit's position.
    written: AtomicU64,
    /// Bytes in the current log file (read after every write request, so
    /// not behind the appender's lock).
    log_bytes: AtomicU64,
    /// The position an `fdatasync` has covered.
    synced: tokio::sync::watch::Sender<u64>,
    /// Wakes the sync thread (`always`), which holds it without holding
    /// the journal, so that dropping the journal releases the directory.
    signal: Arc<SyncSignal>,
    failed: AtomicBool,
}

#[derive(Debug, Default)]
struct SyncSignal {
    /// (a commit waits for a sync, the journal is gone)
    state: Mutex<(bool, bool)>,
    wake: Condvar,
}

impl SyncSignal {
    fn set(&self, update: impl FnOnce(&mut (bool, bool))) {
        update(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()));
        self.wake.notify_one();
    }

    /// Waits until a commit asks for a sync (`true`) or the journal is gone.
    fn wait(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut state = self
            .wake
            .wait_while(state, |(wanted, closed)| !*wanted && !*closed)
            .unwrap_or_else(|e| e.into_inner());
        let wanted = std::mem::take(&mut state.0);
        wanted && !state.1
    }
}

impl Journal {
    /// Opens the log of `generation` for appending (created if absent) and
    /// starts the sync thread the mode needs.
    pub fn open(dir: DataDir, generation: u64, mode: SyncMode) -> io::Result<Arc<Journal>> {
        let path = dir.log_path(generation);
        let created = !path.exists();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let log_bytes = file.metadata()?.len();
        if created {
            dir.sync()?;
        }
        let journal = Arc::new(Journal {
            dir,
            mode,
            appender: Mutex::new(Appender {
                file: Arc::new(file),
                generation,
                pending: Vec::new(),
                frame: Vec::new(),
            }),
            written: AtomicU64::new(0),
            log_bytes: AtomicU64::new(log_bytes),
            synced: tokio::sync::watch::Sender::new(0),
            signal: Arc::default(),
            failed: AtomicBool::new(false),
        });
        if mode != SyncMode::Never {
            let (weak, signal) = (Arc::downgrade(&journal), journal.signal.clone());
            std::thread::Builder::new()
                .name("cosmos-sync".into())
                .spawn(move || sync_loop(weak, signal, mode))?;
        }
        Ok(journal)
    }

    pub fn dir(&self) -> &DataDir {
        &self.dir
    }

    fn appender(&self) -> MutexGuard<'_, Appender> {
        self.appender.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a record to the operation in progress: `encode` appends it.
    pub fn record(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        encode(&mut self.appender().pending);
    }

    /// Whether a write failed: later writes are refused.
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Writes the operation's records as one frame, after `header` (the
    /// caller's per-commit fields). Called with the store's write lock held,
    /// so that frames follow the order of the changes.
    pub fn commit(&self, header: &[u8]) {
        let mut appender = self.appender();
        if appender.pending.is_empty() {
            return;
        }
        let outcome = if self.has_failed() {
            appender.pending.clear();
            Committed::Failed
        } else {
            match write_frame(&mut appender, header) {
                Ok(bytes) => {
                    self.log_bytes.fetch_add(bytes, Ordering::AcqRel);
                    let through = self.written.fetch_add(bytes, Ordering::AcqRel) + bytes;
                    if self.mode == SyncMode::Always {
                        self.wake_sync();
                    }
                    Committed::Through(through)
                }
                Err(e) => {
                    tracing::error!(error = %e, dir = %self.dir.path().display(),
                        "cannot write to the data directory: writes are refused from now on");
                    self.failed.store(true, Ordering::Release);
                    Committed::Failed
                }
            }
        };
        drop(appender);
        let _ = COMMITTED.try_with(|c| {
            c.set(match (c.get(), outcome) {
                (Committed::Failed, _) | (_, Committed::Failed) => Committed::Failed,
                (_, later) => later,
            })
        });
    }

    /// Runs `request` (a request's handling) and reports what it committed,
    /// once that is as durable as the sync mode promises.
    pub async fn track<T>(&self, request: impl std::future::Future<Output = T>) -> (T, Committed) {
        let (answer, committed) = COMMITTED
            .scope(Cell::new(Committed::Nothing), async {
                let answer = request.await;
                (answer, COMMITTED.with(Cell::get))
            })
            .await;
        if let (SyncMode::Always, Committed::Through(position)) = (self.mode, committed) {
            let mut synced = self.synced.subscribe();
            if synced.wait_for(|s| *s >= position).await.is_err() || self.has_failed() {
                return (answer, Committed::Failed);
            }
        }
        (answer, committed)
    }

    fn wake_sync(&self) {
        self.signal.set(|(wanted, _)| *wanted = true);
    }

    /// Syncs what has been written so far; returns the position covered.
    fn sync_now(&self) -> io::Result<u64> {
        let (file, through) = {
            let appender = self.appender();
            (appender.file.clone(), self.written.load(Ordering::Acquire))
        };
        if *self.synced.borrow() < through {
            file.sync_data()?;
            self.synced.send_if_modified(|s| {
                let moved = *s < through;
                *s = (*s).max(through);
                moved
            });
        }
        Ok(through)
    }

    /// Makes every later write fail, as a full disk would (tests).
    #[cfg(test)]
    pub(crate) fn fail_writes(&self) -> io::Result<()> {
        let mut appender = self.appender();
        let path = self.dir.log_path(appender.generation);
        appender.file = Arc::new(File::open(path)?);
        Ok(())
    }

    /// The current log's generation and size.
    pub fn log_size(&self) -> (u64, u64) {
        let appender = self.appender();
        (appender.generation, self.log_bytes.load(Ordering::Acquire))
    }

    /// The current log's size.
    pub fn log_bytes(&self) -> u64 {
        self.log_bytes.load(Ordering::Acquire)
    }

    /// Syncs the current log now, without holding anything while the disk
    /// works (a compaction's first step: the sync it then makes under the
    /// store's lock has only the last writes left).
    pub fn sync_log(&self) -> io::Result<()> {
        let file = self.appender().file.clone();
        file.sync_data()
    }

    /// Ends the current log and starts the next generation's: the state at
    /// this point goes into that generation's snapshot. Called with the
    /// store's write lock held. Returns the new generation.
    pub fn start_generation(&self) -> io::Result<u64> {
        let mut appender = self.appender();
        appender.file.sync_data()?;
        let generation = appender.generation + 1;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.log_path(generation))?;
        self.dir.sync()?;
        appender.file = Arc::new(file);
        appender.generation = generation;
        self.log_bytes.store(0, Ordering::Release);
        Ok(generation)
    }

    /// Writes the snapshot of `generation` (`write` writes its frames): to
    /// a temporary file, synced, then renamed; older generations' files are
    /// removed once it is in place. Returns its size.
    pub fn write_snapshot(
        &self,
        generation: u64,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<u64> {
        let path = self.dir.snapshot_path(generation);
        let temporary = path.with_extension("tmp");
        let mut file = io::BufWriter::with_capacity(1 << 20, File::create(&temporary)?);
        write(&mut file)?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        let size = file.metadata()?.len();
        drop(file);
        std::fs::rename(&temporary, &path)?;
        self.dir.sync()?;
        self.dir.remove_before(generation)?;
        Ok(size)
    }
}

fn write_frame(appender: &mut Appender, header: &[u8]) -> io::Result<u64> {
    let Appender {
        file,
        pending,
        frame: out,
        ..
    } = appender;
    out.clear();
    let framed = frame::encode_parts(&[header, pending], out);
    pending.clear();
    framed?;
    let written = (&**file).write_all(out).map(|()| out.len() as u64);
    // A rare large operation (a restore, a delete of a large partition)
    // must not keep its buffers' size for the life of the process.
    for buffer in [pending, out] {
        buffer.shrink_to(KEPT_BUFFER_BYTES);
    }
    written
}

/// The capacity the appender's buffers keep between operations.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

impl Drop for Journal {
    /// A clean stop leaves nothing unsynced, whatever the mode.
    fn drop(&mut self) {
        self.signal.set(|(_, closed)| *closed = true);
        let _ = self.appender().file.sync_data();
    }
}

/// The sync thread: `always` syncs as soon as a commit waits (one
/// `fdatasync` for every commit written meanwhile), `periodic` once a
/// second. It ends with the journal.
fn sync_loop(journal: Weak<Journal>, signal: Arc<SyncSignal>, mode: SyncMode) {
    loop {
        match mode {
            SyncMode::Periodic => std::thread::sleep(PERIODIC_SYNC),
            _ => {
                if !signal.wait() {
                    return;
                }
            }
        }
        let Some(journal) = journal.upgrade() else {
            return;
        };
        if let Err(e) = journal.sync_now() {
            tracing::error!(error = %e, "cannot sync the data directory: writes are refused from now on");
            journal.failed.store(true, Ordering::Release);
            // Wake the waiters: they answer with the failure.
            journal.synced.send_modify(|s| *s = u64::MAX);
        }
    }
}
