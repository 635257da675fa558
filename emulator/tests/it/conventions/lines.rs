//! What the binary writes to stdout once it serves, and the explorer page
//! container tools poll.

use super::start;
use super::support::Scratch;

#[test]
fn stdout_holds_the_four_lines_in_order_with_crlf_after_started() {
    let scratch = Scratch::new("lines");
    let mut emu = start(&scratch, &["--port", "0"], &[]);
    let endpoint = emu.api.endpoint().to_string();
    assert!(endpoint.starts_with("http://localhost:"), "{endpoint}");
    assert!(!endpoint.ends_with('/'));
    let port = endpoint.rsplit(':').next().unwrap();
    let addresses = emu.next_stdout_line().unwrap();
    assert!(
        addresses == format!("addresses http://127.0.0.1:{port} http://[::1]:{port}\n")
            || addresses == format!("addresses http://127.0.0.1:{port}\n"),
        "{addresses:?}"
    );
    assert_eq!(
        emu.next_stdout_line().as_deref(),
        Some(format!("Now listening on: {endpoint}\n").as_str())
    );
    assert_eq!(emu.next_stdout_line().as_deref(), Some("Started\r\n"));
    emu.terminate();
    assert_eq!(emu.next_stdout_line(), None, "nothing more on stdout");
}

/// `(status, content type, body)` of `method path`, unsigned.
fn fetch(
    client: &reqwest::blocking::Client,
    method: reqwest::Method,
    url: &str,
) -> (u16, String, String) {
    let reply = client.request(method, url).send().unwrap();
    let content_type = reply
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (reply.status().as_u16(), content_type, reply.text().unwrap())
}

#[test]
fn the_explorer_page_is_public_and_built_into_the_binary() {
    let scratch = Scratch::new("explorer");
    let emu = start(&scratch, &["--port", "0"], &[]);
    let endpoint = emu.api.endpoint();
    let client = reqwest::blocking::Client::new();
    for path in ["/_explorer/index.html", "/_explorer/", "/_explorer"] {
        let reply = client.get(format!("{endpoint}{path}")).send().unwrap();
        assert_eq!(reply.status().as_u16(), 200, "{path}");
        let header = |name: &str| {
            reply
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        };
        assert!(header("content-type").starts_with("text/html"), "{path}");
        // Scripts from the emulator only: nothing from a CDN, no inline code.
        let policy = header("content-security-policy");
        assert!(policy.contains("script-src 'self'"), "{policy}");
        assert!(policy.contains("connect-src 'self'"), "{policy}");
        let body = reply.text().unwrap();
        assert!(
            body.contains(&format!("cosmos-emulator {}", env!("CARGO_PKG_VERSION"))),
            "{body}"
        );
        // Absolute asset URLs: /_explorer without its slash works as well.
        assert!(body.contains(r#"src="/_explorer/main.js""#), "{body}");
        assert!(
            !body.contains("http://") && !body.contains("https://"),
            "{body}"
        );
    }
    // Every asset the page loads is there, with its type; others are 404.
    for (asset, kind) in [
        ("main.js", "text/javascript"),
        ("api.js", "text/javascript"),
        ("style.css", "text/css"),
    ] {
        let (status, content_type, _) = fetch(
            &client,
            reqwest::Method::GET,
            &format!("{endpoint}/_explorer/{asset}"),
        );
        assert_eq!(status, 200, "{asset}");
        assert!(content_type.starts_with(kind), "{asset}: {content_type}");
    }
    let (status, _, body) = fetch(
        &client,
        reqwest::Method::GET,
        &format!("{endpoint}/_explorer/secrets.txt"),
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("NotFound"), "{body}");
    let (status, _, body) = fetch(
        &client,
        reqwest::Method::HEAD,
        &format!("{endpoint}/_explorer/index.html"),
    );
    assert_eq!((status, body.as_str()), (200, ""));
    let (status, _, _) = fetch(
        &client,
        reqwest::Method::POST,
        &format!("{endpoint}/_explorer/index.html"),
    );
    assert_eq!(status, 405);
    // The page is public; the data behind it is not.
    let (status, _, _) = fetch(
        &client,
        reqwest::Method::GET,
        &format!("{endpoint}/_emulator/stats"),
    );
    assert_eq!(status, 401);
}

#[test]
fn over_https_the_explorer_page_and_the_certificate_are_served() {
    let scratch = Scratch::new("explorer-tls");
    let pem = scratch.root.join("emulator.pem");
    let emu = start(
        &scratch,
        &["--port", "0", "--tls", "--cert-out", pem.to_str().unwrap()],
        &[],
    );
    let client = reqwest::blocking::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&std::fs::read(&pem).unwrap()).unwrap()])
        .build()
        .unwrap();
    for path in ["index.html", "main.js", "emulator.pem"] {
        let (status, _, _) = fetch(
            &client,
            reqwest::Method::GET,
            &format!("{}/_explorer/{path}", emu.api.endpoint()),
        );
        assert_eq!(status, 200, "{path}");
    }
}

#[test]
fn with_the_explorer_off_the_page_is_a_cosmos_404() {
    let scratch = Scratch::new("explorer-off");
    for (args, vars) in [
        (&["--port", "0", "--enable-explorer", "false"][..], &[][..]),
        (&["--port", "0"], &[("ENABLE_EXPLORER", "false")]),
    ] {
        let emu = start(&scratch, args, vars);
        for path in ["/_explorer/index.html", "/_explorer/"] {
            let reply = reqwest::blocking::get(format!("{}{path}", emu.api.endpoint())).unwrap();
            assert_eq!(reply.status().as_u16(), 404, "{args:?} {vars:?} {path}");
            let body: serde_json::Value = reply.json().unwrap();
            assert_eq!(body["code"], "NotFound", "{body}");
        }
    }
    // The flag beats the variable.
    let emu = start(
        &scratch,
        &["--port", "0", "--enable-explorer", "true"],
        &[("ENABLE_EXPLORER", "false")],
    );
    let reply =
        reqwest::blocking::get(format!("{}/_explorer/index.html", emu.api.endpoint())).unwrap();
    assert_eq!(reply.status().as_u16(), 200);
}
