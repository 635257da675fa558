//! HTTPS with certificates made at start-up: a local certificate authority,
//! and server certificates it signs. Clients trust the authority's
//! certificate (written by `--cert-out`, served at `/_explorer/emulator.pem`
//! as Microsoft's emulator does) instead of turning verification off. Two
//! certificates rather than one self-signed server certificate, because
//! rustls-based clients refuse a CA certificate used as a server's own.
//!
//! The server certificate made at start names `localhost`, `127.0.0.1`,
//! `::1` and the listening host. A client that asks for another name in its
//! handshake (SNI: a compose service name such as `cosmos`, a container's
//! host name) gets a certificate for that name, signed on first use by the
//! same authority and kept: whatever name reaches the emulator verifies.
//! (A client that addresses an IP address sends no name, and gets the
//! start's certificate.)
//!
//! The authority is made at each start unless it is given (`--cert`: an
//! authority's certificate and key, which then signs as above, or a server
//! certificate, served as it is; `files.rs`) or kept (`--cert-dir`, or the
//! data directory: made once, read back by every later start; `kept.rs`).

mod files;
mod kept;

pub use files::CertificateFiles;

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use time::OffsetDateTime;

/// How long the certificates are valid, from the moment they are made.
const VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);
/// How long a kept authority is valid: a trust store built on it lasts.
const KEPT_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// How many names beyond the start's keep their certificate; past that a
/// certificate is signed for each handshake that asks (a client sending
/// endless made-up names must not grow the process).
const MAX_KEPT_NAMES: usize = 256;

pub struct Certificates {
    /// The certificate clients trust (PEM): the authority's, or, for a
    /// server certificate given as it is, the last of its chain.
    pub authority_pem: String,
    served: Served,
}

/// What the server presents.
enum Served {
    /// A certificate per name asked, signed by the authority.
    Signed(Box<Signer>),
    /// A server certificate given (`--cert`), for every name.
    Given {
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    },
}

struct Signer {
    authority_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
    /// The one key of every server certificate (a name costs a signature,
    /// not a key).
    server_key: KeyPair,
    /// The names of the start's server certificate.
    names: Vec<String>,
    not_before: OffsetDateTime,
    not_after: OffsetDateTime,
}

/// Makes the authority and the server key, valid from now: never already
/// expired.
pub fn generate(host: &str) -> Result<Certificates, rcgen::Error> {
    let (authority, authority_key, authority_cert) = make_authority(VALIDITY)?;
    Ok(Certificates {
        authority_pem: authority_cert.pem(),
        served: Served::Signed(Box::new(Signer {
            authority_der: authority_cert.der().clone(),
            not_before: authority.not_before,
            not_after: authority.not_after,
            issuer: Issuer::new(authority, authority_key),
            server_key: KeyPair::generate()?,
            names: start_names(host),
        })),
    })
}

/// The certificates to serve: `given` (`--cert`), else the authority kept
/// in `keep_in` (made there first if need be), else one made now.
pub fn prepare(
    host: &str,
    given: Option<&CertificateFiles>,
    keep_in: Option<&Path>,
) -> io::Result<Certificates> {
    let loaded = match (given, keep_in) {
        (Some(files), _) => files::load(files)?,
        (None, Some(dir)) => kept::load_or_keep(dir, || {
            let (_, key, cert) = make_authority(KEPT_VALIDITY).map_err(io::Error::other)?;
            Ok((cert.pem(), key.serialize_pem()))
        })?,
        (None, None) => return generate(host).map_err(io::Error::other),
    };
    if !loaded.is_authority()? {
        let authority_pem = pem("CERTIFICATE", loaded.chain.last().expect("a chain"));
        return Ok(Certificates {
            authority_pem,
            served: Served::Given {
                chain: loaded.chain,
                key: loaded.key,
            },
        });
    }
    let refused = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    let not_after = OffsetDateTime::from_unix_timestamp(loaded.not_after()?)
        .map_err(|e| refused(format!("the authority's validity: {e}")))?;
    let signing_key = KeyPair::try_from(&loaded.key)
        .map_err(|e| refused(format!("the authority's key cannot sign: {e}")))?;
    let authority_der = loaded.chain[0].clone();
    let issuer = Issuer::from_ca_cert_der(&authority_der, signing_key)
        .map_err(|e| refused(format!("the authority's certificate cannot be read: {e}")))?;
    let not_before = OffsetDateTime::now_utc();
    Ok(Certificates {
        authority_pem: pem("CERTIFICATE", &authority_der),
        served: Served::Signed(Box::new(Signer {
            authority_der,
            issuer,
            server_key: KeyPair::generate().map_err(io::Error::other)?,
            names: start_names(host),
            not_before,
            not_after: not_after.min(not_before + VALIDITY),
        })),
    })
}

/// `der` in PEM, as `label`, with the `\n` line endings rcgen writes.
fn pem(label: &str, der: &[u8]) -> String {
    let config = pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF);
    pem::encode_config(&pem::Pem::new(label, der), config)
}

/// The names of the start's server certificate: the loopback's and `host`.
fn start_names(host: &str) -> Vec<String> {
    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    let host = host.to_ascii_lowercase();
    if !names.contains(&host) && host != "0.0.0.0" && host != "::" {
        names.push(host);
    }
    names
}

/// A new authority valid for `validity` from now: its parameters, key and
/// self-signed certificate.
fn make_authority(
    validity: Duration,
) -> Result<(CertificateParams, KeyPair, rcgen::Certificate), rcgen::Error> {
    let not_before = OffsetDateTime::now_utc();
    let mut authority = CertificateParams::new(Vec::<String>::new())?;
    authority.distinguished_name = name("cosmos-emulator local CA");
    authority.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    authority.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    authority.not_before = not_before;
    authority.not_after = not_before + validity;
    let key = KeyPair::generate()?;
    let cert = authority.self_signed(&key)?;
    Ok((authority, key, cert))
}

impl Signer {
    /// The server certificate for `names`, followed by the authority.
    fn chain(&self, names: Vec<String>) -> Result<Vec<CertificateDer<'static>>, rcgen::Error> {
        let mut server = CertificateParams::new(names)?;
        server.distinguished_name = name("localhost");
        server.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        server.use_authority_key_identifier_extension = true;
        server.not_before = self.not_before;
        server.not_after = self.not_after;
        let server = server.signed_by(&self.server_key, &self.issuer)?;
        Ok(vec![server.der().clone(), self.authority_der.clone()])
    }
}

impl Certificates {
    /// The rustls configuration: HTTP/2 and HTTP/1.1 offered by ALPN, the
    /// certificate chosen by the name the client asks for. Consumes the
    /// authority's key, which lives on in the resolver only.
    pub fn server_config(self) -> Result<Arc<ServerConfig>, String> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_no_client_auth();
        let mut config = match self.served {
            Served::Given { chain, key } => {
                let signing_key = provider
                    .key_provider
                    .load_private_key(key)
                    .map_err(|e| format!("--cert's key: {e}"))?;
                let certified = CertifiedKey::new(chain, signing_key);
                certified
                    .keys_match()
                    .map_err(|e| format!("--cert: the key is not the certificate's ({e})"))?;
                builder.with_cert_resolver(Arc::new(Always(Arc::new(certified))))
            }
            Served::Signed(signer) => {
                let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
                    signer.server_key.serialize_der(),
                ));
                let signing_key = provider
                    .key_provider
                    .load_private_key(key)
                    .map_err(|e| format!("the server key: {e}"))?;
                let chain = signer
                    .chain(signer.names.clone())
                    .map_err(|e| format!("the server certificate: {e}"))?;
                let resolver = ByName {
                    default: Arc::new(CertifiedKey::new(chain, signing_key.clone())),
                    signing_key,
                    kept: Mutex::new(HashMap::new()),
                    signer: *signer,
                };
                builder.with_cert_resolver(Arc::new(resolver))
            }
        };
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// One certificate for every name: a server certificate given as it is.
#[derive(Debug)]
struct Always(Arc<CertifiedKey>);

impl ResolvesServerCert for Always {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// The certificate for the name a client asks for (module doc).
struct ByName {
    signer: Signer,
    signing_key: Arc<dyn rustls::sign::SigningKey>,
    /// The start's certificate: for no name, or one of its names.
    default: Arc<CertifiedKey>,
    /// The certificates signed since, by name.
    kept: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl ResolvesServerCert for ByName {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let Some(asked) = hello.server_name() else {
            return Some(self.default.clone());
        };
        let asked = asked.to_ascii_lowercase();
        if self.signer.names.contains(&asked) {
            return Some(self.default.clone());
        }
        let kept = || self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = kept().get(&asked) {
            return Some(key.clone());
        }
        // Signed without the lock: handshakes for names already kept never
        // wait behind a signature. Two first handshakes for one name may
        // both sign; the first kept is the one served from then on.
        match self.signer.chain(vec![asked.clone()]) {
            Ok(chain) => {
                let key = Arc::new(CertifiedKey::new(chain, self.signing_key.clone()));
                let mut kept = kept();
                if let Some(first) = kept.get(&asked) {
                    return Some(first.clone());
                }
                if kept.len() < MAX_KEPT_NAMES {
                    kept.insert(asked, key.clone());
                }
                Some(key)
            }
            Err(e) => {
                // rustls checked the name already; should signing still fail,
                // the start's certificate lets the client say what is wrong.
                tracing::warn!(name = %asked, error = %e, "no certificate for the name asked");
                Some(self.default.clone())
            }
        }
    }
}

impl fmt::Debug for ByName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByName")
            .field("names", &self.signer.names)
            .finish_non_exhaustive()
    }
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}
