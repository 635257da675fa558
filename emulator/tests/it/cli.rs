//! The binary: the `listening on` line first on stdout (`localhost` by
//! name, then the addresses it stands for, then the two lines container
//! tools wait for), a working endpoint on both loopbacks, a clean stop on
//! SIGTERM and SIGINT.

use std::io::{BufRead, BufReader, Read};
use std::process::{ChildStdout, Command, Stdio};

/// The child, its first line on stdout, and the reader of the rest (which
/// may hold more lines already: read on through it, never around it).
fn start(args: &[&str]) -> (std::process::Child, String, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosmos-emulator"))
        .args(args)
        .env_remove("PORT")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    (child, line, stdout)
}

fn stop_with(child: &mut std::process::Child, signal: &str) -> std::process::ExitStatus {
    Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap()
}

#[test]
fn prints_one_line_serves_and_stops_on_sigterm() {
    let (mut child, line, mut stdout) = start(&[
        "--port",
        "0",
        "--clock",
        "manual",
        "--clock-start",
        "1234567890",
    ]);
    let endpoint = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(endpoint.starts_with("http://localhost:"), "{endpoint}");
    let port = endpoint.rsplit(':').next().unwrap();
    let mut second = String::new();
    stdout.read_line(&mut second).unwrap();
    let addresses: Vec<&str> = second
        .trim()
        .strip_prefix("addresses ")
        .unwrap_or_else(|| panic!("unexpected second line {second:?}"))
        .split(' ')
        .collect();
    assert_eq!(addresses[0], format!("http://127.0.0.1:{port}"));
    // Where the machine has IPv6, ::1 on the same port.
    if let Some(v6) = addresses.get(1) {
        assert_eq!(*v6, format!("http://[::1]:{port}"));
    }
    // Unauthenticated, but a Cosmos-shaped answer from a live server: by
    // name, and at each address.
    for url in std::iter::once(endpoint.as_str()).chain(addresses.iter().copied()) {
        let reply = reqwest::blocking::get(format!("{url}/_emulator/clock")).unwrap();
        assert_eq!(reply.status().as_u16(), 401, "{url}");
    }
    assert!(stop_with(&mut child, "-TERM").success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(
        rest,
        format!("Now listening on: {endpoint}\nStarted\r\n"),
        "stdout holds exactly four lines"
    );
}

#[test]
fn tls_prints_an_https_line_and_writes_the_certificate() {
    let pem = std::env::temp_dir().join(format!("cli-tls-{}.pem", std::process::id()));
    // The rest of stdout is closed unread, as by a script that wants only
    // the first line: the emulator serves on regardless, and stops cleanly.
    let (mut child, line, _) =
        start(&["--port", "0", "--tls", "--cert-out", pem.to_str().unwrap()]);
    assert!(
        line.starts_with("listening on https://localhost:"),
        "{line:?}"
    );
    let written = std::fs::read_to_string(&pem).unwrap();
    assert!(written.starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(stop_with(&mut child, "-TERM").success());
}

#[test]
fn stops_on_sigint() {
    let (mut child, _, _) = start(&["--port", "0"]);
    assert!(stop_with(&mut child, "-INT").success());
}

#[test]
fn bad_arguments_fail_clearly() {
    for args in [
        &["--key", "not base64!"][..],
        &["--clock", "sundial"],
        &["--clock-start", "5"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cosmos-emulator"))
            .args(args)
            .args(["--port", "0"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

/// `--compute-gateway-port`: a second endpoint over the same account, named
/// on the second line, that reads URLs as clients sign them. An item whose
/// id ends in whitespace or holds a tab is created through either; the
/// routing gateway then answers 401 and 400 to its reads, the compute
/// gateway 200 (the JavaScript SDK's RGW_ and CGW_ tests). Both stop on
/// SIGTERM.
#[test]
fn the_compute_gateway_serves_the_same_account_reading_ids_as_signed() {
    use cosmos_emulator::protocol::auth::{
        authorization_header, payload, MasterKey, WELL_KNOWN_KEY,
    };
    let (mut child, line, mut stdout) = start(&["--port", "0", "--compute-gateway-port", "0"]);
    let routing = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    let mut second = String::new();
    stdout.read_line(&mut second).unwrap();
    assert!(second.starts_with("addresses "), "{second:?}");
    second.clear();
    stdout.read_line(&mut second).unwrap();
    let compute = second
        .trim()
        .strip_prefix("compute gateway listening on ")
        .unwrap_or_else(|| panic!("unexpected second line {second:?}"))
        .to_string();
    assert_ne!(routing, compute);
    let key = MasterKey::from_base64(WELL_KNOWN_KEY).unwrap();
    let http = reqwest::blocking::Client::new();
    // Signed as an SDK signs: the link with the id as it is, the URL escaped.
    let send = |endpoint: &str,
                method: &str,
                (ty, link): (&str, &str),
                url: &str,
                body: Option<String>| {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let signed = payload(method, ty, link, &date, "");
        let mut request = http
            .request(method.parse().unwrap(), format!("{endpoint}{url}"))
            .header("x-ms-date", &date)
            .header("x-ms-version", "2020-07-15")
            .header("authorization", authorization_header(&key, &signed))
            .header("x-ms-documentdb-partitionkey", "[\"p\"]");
        if let Some(body) = body {
            request = request.body(body);
        }
        request.send().unwrap().status().as_u16()
    };
    let created = send(
        &routing,
        "POST",
        ("dbs", ""),
        "/dbs",
        Some(r#"{"id":"d"}"#.into()),
    );
    assert_eq!(created, 201);
    let container = r#"{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"}}"#;
    assert_eq!(
        send(
            &compute,
            "POST",
            ("colls", "dbs/d"),
            "/dbs/d/colls",
            Some(container.into())
        ),
        201
    );
    for (id, escaped, at_routing) in [("Test ", "Test%20", 401), ("a\tb", "a%09b", 400)] {
        let item = serde_json::json!({"id": id, "pk": "p"}).to_string();
        assert_eq!(
            send(
                &routing,
                "POST",
                ("docs", "dbs/d/colls/c"),
                "/dbs/d/colls/c/docs",
                Some(item)
            ),
            201
        );
        let link = format!("dbs/d/colls/c/docs/{id}");
        let url = format!("/dbs/d/colls/c/docs/{escaped}");
        let item = ("docs", link.as_str());
        assert_eq!(
            send(&routing, "GET", item, &url, None),
            at_routing,
            "{id:?}"
        );
        assert_eq!(send(&compute, "GET", item, &url, None), 200, "{id:?}");
        assert_eq!(send(&compute, "DELETE", item, &url, None), 204, "{id:?}");
    }
    assert!(stop_with(&mut child, "-TERM").success());
}
