//! A certificate the user gives (`--cert`, `--cert-key`, `--cert-password`):
//! PEM (the certificate chain, its key in the same file or in `--cert-key`;
//! PKCS#8, PKCS#1 or SEC1) or PKCS#12 (`.pfx`, `.p12`, with its password,
//! as Microsoft's Linux emulator takes `CERT_PATH` and `CERT_SECRET`).
//!
//! Either is one of two things, told apart by the first certificate's basic
//! constraints: an authority (CA: true), whose key then signs the server
//! certificates as the one made at start does, so that one trust store
//! built once trusts every emulator given it; or a server certificate,
//! served as it is for every name.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use p12_keystore::{KeyStore, Pkcs12ImportPolicy};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Where the certificate to serve comes from (the settings).
#[derive(Clone, PartialEq, Eq)]
pub struct CertificateFiles {
    /// PEM, or PKCS#12 (by its `.pfx`/`.p12` name, or content that is not PEM).
    pub cert: PathBuf,
    /// The private key (PEM), when not in `cert`.
    pub key: Option<PathBuf>,
    /// A PKCS#12 file's password (none: empty).
    pub password: Option<String>,
}

impl fmt::Debug for CertificateFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the password.
        f.debug_struct("CertificateFiles")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .finish()
    }
}

/// A certificate chain and its key, read from files or kept.
pub struct Loaded {
    /// The chain, the certificate whose key this is first.
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl Loaded {
    /// Whether the first certificate is an authority's (basic constraints
    /// CA: true), which then signs the server certificates.
    pub fn is_authority(&self) -> io::Result<bool> {
        let (_, cert) = x509_parser::parse_x509_certificate(&self.chain[0])
            .map_err(|e| invalid(format!("the certificate cannot be read: {e}")))?;
        Ok(cert.is_ca())
    }

    /// The first certificate's last instant of validity, epoch seconds.
    pub fn not_after(&self) -> io::Result<i64> {
        let (_, cert) = x509_parser::parse_x509_certificate(&self.chain[0])
            .map_err(|e| invalid(format!("the certificate cannot be read: {e}")))?;
        Ok(cert.validity().not_after.timestamp())
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Reads `files`; every failure names the file and what it holds.
pub fn load(files: &CertificateFiles) -> io::Result<Loaded> {
    let cert_path = &files.cert;
    let bytes = read(cert_path, "--cert")?;
    let named = |what: String| invalid(format!("--cert {}: {what}", cert_path.display()));
    if is_pkcs12(cert_path, &bytes) {
        if files.key.is_some() {
            return Err(named(
                "a PKCS#12 file holds its key: --cert-key goes with a PEM certificate only".into(),
            ));
        }
        let password = files.password.as_deref().unwrap_or("");
        return from_pkcs12(&bytes, password).map_err(named);
    }
    if files.password.is_some() {
        return Err(named(
            "--cert-password opens a PKCS#12 file (.pfx, .p12); this one is PEM".into(),
        ));
    }
    let chain = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| named(format!("not a PEM certificate: {e}")))?;
    if chain.is_empty() {
        return Err(named(
            "no CERTIFICATE in it (PEM, or a PKCS#12 file named .pfx or .p12)".into(),
        ));
    }
    let key = match &files.key {
        Some(key_path) => {
            let key_bytes = read(key_path, "--cert-key")?;
            PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|e| {
                invalid(format!(
                    "--cert-key {}: no private key (PEM: PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY): {e}",
                    key_path.display()
                ))
            })?
        }
        None => PrivateKeyDer::from_pem_slice(&bytes).map_err(|_| {
            named("no private key in it: add --cert-key with the key's file".into())
        })?,
    };
    Ok(Loaded { chain, key })
}

fn read(path: &Path, flag: &str) -> io::Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{flag} {}: {e}", path.display())))
}

/// By the name (`.pfx`, `.p12`), else by the content: a PEM file starts
/// with text, a PKCS#12 file with a DER sequence (0x30).
fn is_pkcs12(path: &Path, bytes: &[u8]) -> bool {
    let by_name = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("pfx") || e.eq_ignore_ascii_case("p12"));
    by_name || bytes.first() == Some(&0x30)
}

fn from_pkcs12(bytes: &[u8], password: &str) -> Result<Loaded, String> {
    let store =
        KeyStore::from_pkcs12(bytes, password, Pkcs12ImportPolicy::Relaxed).map_err(|e| {
            format!("cannot open the PKCS#12 file ({e:?}): check --cert-password (CERT_SECRET)")
        })?;
    let (_, chain) = store
        .private_key_chain()
        .ok_or("the PKCS#12 file holds no private key with its certificate")?;
    let certs: Vec<CertificateDer<'static>> = chain
        .certs()
        .iter()
        .map(|c| CertificateDer::from(c.as_der().to_vec()))
        .collect();
    if certs.is_empty() {
        return Err("the PKCS#12 file's key has no certificate".into());
    }
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec()));
    Ok(Loaded { chain: certs, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(cert: &Path) -> CertificateFiles {
        CertificateFiles {
            cert: cert.to_path_buf(),
            key: None,
            password: None,
        }
    }

    #[test]
    fn what_is_missing_or_misplaced_is_named() {
        let dir = std::env::temp_dir().join(format!("tls-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let pem = dir.join("c.pem");
        std::fs::write(&pem, cert.pem()).unwrap();
        let message = |f: &CertificateFiles| load(f).err().expect("refused").to_string();
        assert!(message(&files(&pem)).contains("add --cert-key"));
        let with_password = CertificateFiles {
            password: Some("x".into()),
            ..files(&pem)
        };
        assert!(message(&with_password).contains("PKCS#12"));
        assert!(message(&files(&dir.join("absent.pem"))).contains("--cert "));
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "nothing here\n").unwrap();
        assert!(message(&files(&empty)).contains("no CERTIFICATE"));
        // A .pfx that is not one: refused as PKCS#12, with --cert-key too.
        let pfx = dir.join("c.pfx");
        std::fs::write(&pfx, cert.pem()).unwrap();
        assert!(message(&files(&pfx)).contains("PKCS#12"));
        // The key beside the certificate, in its file: loaded, a server's.
        std::fs::write(&pem, format!("{}{}", cert.pem(), key.serialize_pem())).unwrap();
        let loaded = load(&files(&pem)).unwrap();
        assert!(!loaded.is_authority().unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pkcs12_is_told_by_its_name_or_its_first_byte() {
        assert!(is_pkcs12(Path::new("a.PFX"), b"-----BEGIN"));
        assert!(is_pkcs12(Path::new("a.p12"), b""));
        assert!(is_pkcs12(Path::new("cert"), &[0x30, 0x82]));
        assert!(!is_pkcs12(
            Path::new("cert.pem"),
            b"-----BEGIN CERTIFICATE-----"
        ));
    }
}
