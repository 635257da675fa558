//! HTTPS with a certificate that outlives one start: an authority kept in
//! `--cert-dir` (or the data directory) and read back by every start there,
//! and a certificate of the user's (`--cert`): an authority's, which signs,
//! or a server's, served as it is; PEM or PKCS#12 with its password.
//! Every check is a verifying client's.

use std::path::{Path, PathBuf};

use cosmos_emulator::{CertificateFiles, Config, Emulator, Protocol};
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, KeyUsagePurpose};

fn https() -> Config {
    Config {
        protocol: Protocol::Https,
        ..Config::for_tests()
    }
}

/// A client that trusts exactly the certificates of `pem`.
fn trusting(pem: &[u8]) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .tls_certs_only(reqwest::Certificate::from_pem_bundle(pem).unwrap())
        .build()
        .unwrap()
}

/// Whether `client` verifies `emulator` (a public route: no signature).
fn verifies(client: &reqwest::blocking::Client, emulator: &Emulator) -> bool {
    let url = format!("{}/_explorer/emulator.pem", emulator.endpoint());
    client
        .get(url)
        .send()
        .is_ok_and(|r| r.status().is_success())
}

#[test]
fn one_kept_authority_serves_every_emulator_of_its_directory_and_every_restart() {
    let dir = tempdir("kept");
    let config = || Config {
        cert_dir: Some(dir.clone()),
        cert_out: Some(dir.join("out.pem")),
        ..https()
    };
    let first = Emulator::start(config()).unwrap();
    let kept = std::fs::read(dir.join("emulator-ca.pem")).expect("the authority is kept");
    assert_eq!(
        std::fs::read(dir.join("out.pem")).unwrap(),
        kept,
        "--cert-out writes it"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("emulator-ca-key.pem"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the key is its owner's only: {mode:o}");
    }
    let second = Emulator::start(config()).unwrap();
    let client = trusting(&kept);
    assert!(verifies(&client, &first));
    assert!(verifies(&client, &second));
    drop((first, second));
    let again = Emulator::start(config()).unwrap();
    assert!(
        verifies(&client, &again),
        "a restart serves the same authority"
    );
    assert_eq!(std::fs::read(dir.join("emulator-ca.pem")).unwrap(), kept);
    // Without the directory, a start makes its own: the client refuses it.
    let other = Emulator::start(https()).unwrap();
    assert!(!verifies(&client, &other));
}

#[test]
fn emulators_starting_together_on_an_empty_directory_agree_on_one_authority() {
    let dir = tempdir("race");
    let started: Vec<Emulator> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    Emulator::start(Config {
                        cert_dir: Some(dir.clone()),
                        ..https()
                    })
                    .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let client = trusting(&std::fs::read(dir.join("emulator-ca.pem")).unwrap());
    for emulator in &started {
        assert!(verifies(&client, emulator));
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_data_directory_keeps_the_authority_across_restarts() {
    let dir = tempdir("data");
    let config = || Config {
        data_dir: Some(dir.join("data")),
        cert_out: Some(dir.join("out.pem")),
        ..https()
    };
    let first = Emulator::start(config()).unwrap();
    let pem = std::fs::read(dir.join("out.pem")).unwrap();
    drop(first);
    let again = Emulator::start(config()).unwrap();
    assert_eq!(std::fs::read(dir.join("out.pem")).unwrap(), pem);
    assert!(verifies(&trusting(&pem), &again));
}

/// An authority of the user's: its certificate (PEM) and key.
fn authority() -> (String, KeyPair, rcgen::Issuer<'static, KeyPair>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test suite CA");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let issuer_key = KeyPair::from_pem(&key.serialize_pem()).unwrap();
    (cert.pem(), key, rcgen::Issuer::new(params, issuer_key))
}

fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn a_given_authority_signs_the_server_certificates() {
    let dir = tempdir("given-ca");
    let (ca_pem, ca_key, _) = authority();
    let files = CertificateFiles {
        cert: write(&dir, "ca.pem", &ca_pem),
        key: Some(write(&dir, "ca-key.pem", ca_key.serialize_pem())),
        password: None,
    };
    let emulator = Emulator::start(Config {
        certificate: Some(files),
        cert_out: Some(dir.join("out.pem")),
        ..https()
    })
    .unwrap();
    let client = trusting(ca_pem.as_bytes());
    assert!(verifies(&client, &emulator));
    assert_eq!(
        std::fs::read_to_string(dir.join("out.pem")).unwrap(),
        ca_pem
    );
    // The key in the certificate's own file does as well.
    let both = CertificateFiles {
        cert: write(
            &dir,
            "both.pem",
            format!("{ca_pem}{}", ca_key.serialize_pem()),
        ),
        key: None,
        password: None,
    };
    let emulator = Emulator::start(Config {
        certificate: Some(both),
        ..https()
    })
    .unwrap();
    assert!(verifies(&client, &emulator));
}

/// A server certificate for the loopback, signed by `issuer`.
fn server_certificate(issuer: &rcgen::Issuer<'static, KeyPair>) -> (String, KeyPair) {
    let params = CertificateParams::new(vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ])
    .unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert.pem(), key)
}

#[test]
fn a_given_server_certificate_is_served_as_it_is() {
    let dir = tempdir("given-server");
    let (ca_pem, _, issuer) = authority();
    let (server_pem, server_key) = server_certificate(&issuer);
    let emulator = Emulator::start(Config {
        certificate: Some(CertificateFiles {
            cert: write(&dir, "server.pem", &server_pem),
            key: Some(write(&dir, "server-key.pem", server_key.serialize_pem())),
            password: None,
        }),
        ..https()
    })
    .unwrap();
    assert!(verifies(&trusting(ca_pem.as_bytes()), &emulator));
    // A key that is not the certificate's stops the start, saying so.
    let error = Emulator::start(Config {
        certificate: Some(CertificateFiles {
            cert: dir.join("server.pem"),
            key: Some(write(
                &dir,
                "other-key.pem",
                KeyPair::generate().unwrap().serialize_pem(),
            )),
            password: None,
        }),
        ..https()
    })
    .err()
    .expect("refused");
    assert!(
        error.to_string().contains("not the certificate's"),
        "{error}"
    );
}

/// `cert` and `key` in a PKCS#12 file, as `openssl pkcs12 -export` or
/// .NET's `Export-PfxCertificate` write one.
fn pkcs12(cert_pem: &str, key: &KeyPair, password: &str) -> Vec<u8> {
    use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
    use rustls::pki_types::pem::PemObject;
    let der = rustls::pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes()).unwrap();
    let chain = PrivateKeyChain::new(
        b"1".to_vec(),
        PrivateKey::from_der(&key.serialize_der()).unwrap(),
        [Certificate::from_der(&der).unwrap()],
    );
    let mut store = KeyStore::new();
    store.add_entry("cosmos", KeyStoreEntry::PrivateKeyChain(chain));
    store.writer(password).write().unwrap()
}

#[test]
fn a_pkcs12_file_opens_with_its_password_and_not_without() {
    let dir = tempdir("pfx");
    let (ca_pem, _, issuer) = authority();
    let (server_pem, server_key) = server_certificate(&issuer);
    let pfx = write(
        &dir,
        "cosmos.pfx",
        pkcs12(&server_pem, &server_key, "s3cret"),
    );
    let emulator = Emulator::start(Config {
        certificate: Some(CertificateFiles {
            cert: pfx.clone(),
            key: None,
            password: Some("s3cret".into()),
        }),
        ..https()
    })
    .unwrap();
    assert!(verifies(&trusting(ca_pem.as_bytes()), &emulator));
    for wrong in [Some("guess".to_string()), None] {
        let error = Emulator::start(Config {
            certificate: Some(CertificateFiles {
                cert: pfx.clone(),
                key: None,
                password: wrong,
            }),
            ..https()
        })
        .err()
        .expect("refused");
        let message = error.to_string();
        assert!(
            message.contains("cosmos.pfx") && message.contains("password"),
            "{message}"
        );
        assert!(!message.contains("s3cret"), "{message}");
    }
}

/// A fresh directory, unique per call.
fn tempdir(what: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "cosmos-emulator-tls-{what}-{}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
