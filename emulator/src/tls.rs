//! HTTPS with certificates made at start-up: a local certificate authority,
//! and a server certificate it signs for `localhost`, `127.0.0.1` and the
//! listening host. Clients trust the authority's certificate (written by
//! `--cert-out`, served at `/_explorer/emulator.pem` as Microsoft's emulator
//! does) instead of turning verification off. Two certificates rather than
//! one self-signed server certificate, because rustls-based clients refuse a
//! CA certificate used as a server's own.

use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use time::OffsetDateTime;

/// How long the certificates are valid, from the moment they are made.
const VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

pub struct Certificates {
    /// The authority clients trust (PEM).
    pub authority_pem: String,
    /// The server certificate followed by the authority (PEM), for the TLS handshake.
    pub chain_pem: String,
    /// The server certificate's private key (PEM).
    pub key_pem: String,
}

/// Makes the certificates, valid from now: never already expired.
pub fn generate(host: &str) -> Result<Certificates, rcgen::Error> {
    let not_before = OffsetDateTime::now_utc();
    let not_after = not_before + VALIDITY;

    let mut authority = CertificateParams::new(Vec::<String>::new())?;
    authority.distinguished_name = name("cosmos-emulator local CA");
    authority.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    authority.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    authority.not_before = not_before;
    authority.not_after = not_after;
    let authority_key = KeyPair::generate()?;
    let authority_cert = authority.self_signed(&authority_key)?;
    let issuer = Issuer::new(authority, authority_key);

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if !names.iter().any(|n| n == host) && host != "0.0.0.0" && host != "::" {
        names.push(host.to_string());
    }
    let mut server = CertificateParams::new(names)?;
    server.distinguished_name = name("localhost");
    server.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.use_authority_key_identifier_extension = true;
    server.not_before = not_before;
    server.not_after = not_after;
    let server_key = KeyPair::generate()?;
    let server_cert = server.signed_by(&server_key, &issuer)?;

    Ok(Certificates {
        authority_pem: authority_cert.pem(),
        chain_pem: format!("{}{}", server_cert.pem(), authority_cert.pem()),
        key_pem: server_key.serialize_pem(),
    })
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}
