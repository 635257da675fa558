//! `--cert`, `--cert-key`, `--cert-password`, `--cert-dir`: their
//! variables (vNext's `CERT_PATH` and `CERT_SECRET` too), what each needs
//! and what excludes what; a password never shown.

use std::path::PathBuf;

use super::{ok, refused};
use crate::binary::settings::*;

#[test]
fn a_certificate_of_the_users_from_flags_or_variables() {
    let s = ok(&["--tls", "--cert", "/c.pem", "--cert-key", "/k.pem"], &[]);
    let files = s.config.certificate.unwrap();
    assert_eq!(files.cert, PathBuf::from("/c.pem"));
    assert_eq!(files.key, Some(PathBuf::from("/k.pem")));
    assert_eq!(files.password, None);
    assert_eq!(s.config.cert_dir, None);
    // vNext's names: the flags' aliases and its variables.
    let s = ok(
        &[
            "--protocol",
            "https",
            "--cert-path",
            "/c.pfx",
            "--cert-secret",
            "pw",
        ],
        &[],
    );
    let files = s.config.certificate.unwrap();
    assert_eq!(files.cert, PathBuf::from("/c.pfx"));
    assert_eq!(files.password.as_deref(), Some("pw"));
    let s = ok(
        &[],
        &[
            (PROTOCOL, "https"),
            (CERT_PATH, "/v.pfx"),
            (CERT_SECRET, "s3cret"),
        ],
    );
    let files = s.config.certificate.unwrap();
    assert_eq!(files.cert, PathBuf::from("/v.pfx"));
    assert_eq!(files.password.as_deref(), Some("s3cret"));
    assert!(!format!("{files:?}").contains("s3cret"), "Debug hides it");
    let s = ok(
        &[],
        &[
            (COSMOS_EMULATOR_TLS, "true"),
            (COSMOS_EMULATOR_CERT, "/c.pem"),
            (COSMOS_EMULATOR_CERT_KEY, "/k.pem"),
        ],
    );
    assert_eq!(
        s.config.certificate.unwrap().key,
        Some(PathBuf::from("/k.pem"))
    );
}

#[test]
fn a_cert_dir_from_its_flag_or_variable() {
    let s = ok(&["--tls", "--cert-dir", "/ca"], &[]);
    assert_eq!(s.config.cert_dir, Some(PathBuf::from("/ca")));
    assert_eq!(s.config.certificate, None);
    let s = ok(
        &[],
        &[(PROTOCOL, "auto"), (COSMOS_EMULATOR_CERT_DIR, "/ca2")],
    );
    assert_eq!(s.config.cert_dir, Some(PathBuf::from("/ca2")));
}

#[test]
fn each_needs_https_and_the_key_and_password_need_a_certificate() {
    for (args, vars, named) in [
        (&["--cert", "/c.pem"][..], &[][..], "--cert"),
        (&[], &[(CERT_PATH, "/c.pfx")][..], CERT_PATH),
        (&["--cert-dir", "/d"], &[], "--cert-dir"),
        (
            &[],
            &[(COSMOS_EMULATOR_CERT_DIR, "/d")][..],
            COSMOS_EMULATOR_CERT_DIR,
        ),
    ] {
        let message = refused(args, vars, named);
        assert!(message.contains("needs HTTPS"), "{message}");
    }
    let message = refused(&["--tls", "--cert-key", "/k.pem"], &[], "--cert-key");
    assert!(message.contains("add --cert"), "{message}");
    let message = refused(
        &[],
        &[(PROTOCOL, "https"), (CERT_SECRET, "hidden")],
        CERT_SECRET,
    );
    assert!(message.contains("add --cert"), "{message}");
    assert!(!message.contains("hidden"), "{message}");
    let message = refused(
        &["--tls", "--cert", "/c.pem", "--cert-dir", "/d"],
        &[],
        "--cert-dir",
    );
    assert!(message.contains("--cert "), "{message}");
}

#[test]
fn two_password_variables_that_disagree_are_refused_without_showing_either() {
    let message = refused(
        &["--tls", "--cert", "/c.pfx"],
        &[
            (COSMOS_EMULATOR_CERT_PASSWORD, "pw-alpha"),
            (CERT_SECRET, "pw-beta"),
        ],
        CERT_SECRET,
    );
    assert!(message.contains("disagree"), "{message}");
    assert!(
        !message.contains("pw-alpha") && !message.contains("pw-beta"),
        "{message}"
    );
}
