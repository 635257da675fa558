//! The authority made at start, kept in a directory (`--cert-dir`, else
//! the data directory) and read back by every later start there, so that a
//! trust store built once keeps working across restarts and across every
//! emulator given the same directory:
//!
//! - `emulator-ca-key.pem`: the authority's certificate and its private key
//!   (what a start reads back; readable by its owner only on Unix);
//! - `emulator-ca.pem`: the certificate alone, for trust stores (the same
//!   as `--cert-out` writes and `/_explorer/emulator.pem` serves).
//!
//! Emulators starting together on an empty directory make one authority
//! each; the first to link its file in place wins and the others read it
//! (a hard link never replaces a file: no one reads a file half written).
//! An authority that has expired, or will within a day, is replaced.

use std::io::{self, Write};
use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::files::Loaded;

/// The authority and its key.
pub const KEY_FILE: &str = "emulator-ca-key.pem";
/// The authority's certificate alone.
pub const CERT_FILE: &str = "emulator-ca.pem";

/// How long before its end a kept authority is replaced.
const RENEW_BEFORE_SECS: i64 = 24 * 3600;

/// The authority kept in `dir`, or `make()`'s, then kept there.
pub fn load_or_keep(
    dir: &Path,
    make: impl FnOnce() -> io::Result<(String, String)>,
) -> io::Result<Loaded> {
    let named = |e: io::Error, path: &Path| {
        io::Error::new(e.kind(), format!("--cert-dir {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| named(e, dir))?;
    let path = dir.join(KEY_FILE);
    if let Some(kept) = read(&path).map_err(|e| named(e, &path))? {
        if kept.not_after()? - RENEW_BEFORE_SECS > now() {
            write_cert(dir, &kept).map_err(|e| named(e, dir))?;
            return Ok(kept);
        }
        tracing::warn!(path = %path.display(), "the kept certificate authority has expired: making a new one");
        std::fs::remove_file(&path).map_err(|e| named(e, &path))?;
    }
    let (cert_pem, key_pem) = make()?;
    let staged = dir.join(staged_name(KEY_FILE));
    write_private(&staged, format!("{cert_pem}{key_pem}").as_bytes())
        .map_err(|e| named(e, &staged))?;
    let linked = std::fs::hard_link(&staged, &path);
    let _ = std::fs::remove_file(&staged);
    match linked {
        Ok(()) => {}
        // Another start kept one first: that one is the authority.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(named(e, &path)),
    }
    let kept = read(&path)
        .map_err(|e| named(e, &path))?
        .ok_or_else(|| named(io::ErrorKind::NotFound.into(), &path))?;
    write_cert(dir, &kept).map_err(|e| named(e, dir))?;
    Ok(kept)
}

/// The kept authority, if there is one.
fn read(path: &Path) -> io::Result<Option<Loaded>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let bad = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what}: remove the file to have a new authority made"),
        )
    };
    let chain = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad("not a PEM certificate"))?;
    if chain.is_empty() {
        return Err(bad("no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_slice(&bytes).map_err(|_| bad("no private key in it"))?;
    Ok(Some(Loaded { chain, key }))
}

/// `emulator-ca.pem`, replaced whole (its content is the same for every
/// start that writes it).
fn write_cert(dir: &Path, kept: &Loaded) -> io::Result<()> {
    let pem = super::pem("CERTIFICATE", &kept.chain[0]);
    let path = dir.join(CERT_FILE);
    if std::fs::read_to_string(&path).is_ok_and(|old| old == pem) {
        return Ok(());
    }
    let staged = dir.join(staged_name(CERT_FILE));
    std::fs::write(&staged, &pem)?;
    std::fs::rename(&staged, &path)
}

/// `name` staged: unique to this process and call (emulators started on
/// several threads of one process share its id).
fn staged_name(name: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{name}.{}-{n}.tmp", std::process::id())
}

/// A new file readable by its owner only (Unix), written whole.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
