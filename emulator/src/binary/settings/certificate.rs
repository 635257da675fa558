//! The certificate settings: `--cert`, `--cert-key`, `--cert-password`
//! (a certificate of the user's, PEM or PKCS#12, as Microsoft's Linux
//! emulator takes `CERT_PATH` and `CERT_SECRET`) and `--cert-dir` (where
//! the authority made at start is kept). Each needs HTTPS (or auto);
//! `--cert-dir` and `--cert` exclude each other (nothing is made to keep).

use std::path::PathBuf;

use clap::Args;

use super::vars::{
    flag_or_vars, Var, CERT_PATH, CERT_SECRET, COSMOS_EMULATOR_CERT, COSMOS_EMULATOR_CERT_DIR,
    COSMOS_EMULATOR_CERT_KEY, COSMOS_EMULATOR_CERT_PASSWORD,
};
use super::{Env, Invalid};
use crate::net::transport::Protocol;
use crate::CertificateFiles;

/// The flags (flattened into `Flags`).
#[derive(Debug, Args)]
pub struct CertificateArgs {
    /// Serve this certificate instead of one made at start: PEM (its key
    /// in the file or in --cert-key) or PKCS#12 (.pfx, .p12, with
    /// --cert-password). A certificate authority's (CA: true) signs the
    /// server certificates, so that one trust store trusts every emulator
    /// given it; a server certificate is served as it is. Needs HTTPS
    #[arg(long, value_name = "PATH", visible_alias = "cert-path")]
    pub cert: Option<PathBuf>,
    /// The private key of --cert (PEM: PKCS#8, PKCS#1 or SEC1)
    #[arg(long, value_name = "PATH")]
    pub cert_key: Option<PathBuf>,
    /// The password of a PKCS#12 --cert (prefer the variable: a command
    /// line is visible to every user of the machine)
    #[arg(long, value_name = "SECRET", visible_alias = "cert-secret")]
    pub cert_password: Option<String>,
    /// Keep the certificate authority made at start in this directory
    /// (created if needed) and use it again at every start there, so that a
    /// trust store built once keeps working: emulator-ca.pem is its
    /// certificate [default, with HTTPS: the data directory, if any]
    #[arg(long, value_name = "DIR")]
    pub cert_dir: Option<PathBuf>,
}

/// What the certificate settings resolve to.
#[derive(Debug, Default)]
pub struct Resolved {
    pub certificate: Option<CertificateFiles>,
    pub cert_dir: Option<PathBuf>,
}

fn path(v: &Var) -> Result<PathBuf, Invalid> {
    Ok(PathBuf::from(&v.text))
}

/// Flags, then variables; refused without HTTPS, or when they contradict.
pub fn resolve(args: CertificateArgs, env: Env, protocol: Protocol) -> Result<Resolved, Invalid> {
    let cert = flag_or_vars(
        args.cert,
        "cert",
        env,
        &[COSMOS_EMULATOR_CERT, CERT_PATH],
        path,
    )?;
    let key = flag_or_vars(
        args.cert_key,
        "cert-key",
        env,
        &[COSMOS_EMULATOR_CERT_KEY],
        path,
    )?;
    // Never shown in a message: only the variable's name.
    let password = match args.cert_password {
        Some(password) => Some((password, "--cert-password".to_string())),
        None => super::vars::agreed(
            "--cert-password",
            env,
            &[COSMOS_EMULATOR_CERT_PASSWORD, CERT_SECRET],
            |v| Ok(v.text.clone()),
            |v| v.name.to_string(),
        )?
        .map(|found| (found.value, found.source)),
    };
    let cert_dir = flag_or_vars(
        args.cert_dir,
        "cert-dir",
        env,
        &[COSMOS_EMULATOR_CERT_DIR],
        path,
    )?;
    let asked = [
        cert.as_ref().map(|c| &c.source),
        key.as_ref().map(|k| &k.source),
        password.as_ref().map(|p| &p.1),
        cert_dir.as_ref().map(|d| &d.source),
    ];
    if let Some(source) = asked.into_iter().flatten().next() {
        if !protocol.serves_tls() {
            return Err(Invalid(format!(
                "{source} needs HTTPS: add --tls or --protocol https (or auto), or set PROTOCOL=https"
            )));
        }
    }
    let Some(cert) = cert else {
        if let Some(source) = [key.map(|k| k.source), password.map(|p| p.1)]
            .into_iter()
            .flatten()
            .next()
        {
            return Err(Invalid(format!(
                "{source} goes with a certificate: add --cert (or set {COSMOS_EMULATOR_CERT} or {CERT_PATH})"
            )));
        }
        return Ok(Resolved {
            certificate: None,
            cert_dir: cert_dir.map(|d| d.value),
        });
    };
    if let Some(dir) = cert_dir {
        return Err(Invalid(format!(
            "{} keeps an authority made at start, and {} gives the certificate: set only one of them",
            dir.source, cert.source
        )));
    }
    Ok(Resolved {
        certificate: Some(CertificateFiles {
            cert: cert.value,
            key: key.map(|k| k.value),
            password: password.map(|p| p.0),
        }),
        cert_dir: None,
    })
}
