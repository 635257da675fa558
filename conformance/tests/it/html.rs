//! `report.html` as a browser shows it: Debian's `chromium` renders a report
//! of a real run (the fake target without TTL, so that every status shows),
//! `--dump-dom` checks the documentation's tables, and a screenshot checks
//! that each status has its colour on screen. Without chromium the test is
//! skipped with a message, except under CI=true, where it fails.

use crate::common::{all_cases, config, run, NoTtl};
use cosmos_conformance::expectations::Expectations;
use cosmos_conformance::report::Report;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer};

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|path| path.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed (.ci/run installs it)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
    }
    found
}

/// Runs headless Chromium on a file with the given output flags.
fn render(chromium: &Path, page: &Path, flags: &[String]) -> String {
    let profile = std::env::temp_dir().join(format!("chromium-{}", uuid::Uuid::new_v4().simple()));
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(flags)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A report with four statuses: the fake never expires, E3.1 and M1.3 are
/// listed as known failures and E1.1 is listed but passes.
async fn report() -> Report {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(NoTtl::default())
        .mount(&server)
        .await;
    let mut config = config(&server.uri());
    let list = "implementation = \"fake\"\n\
        [[failure]]\nid = \"E3.1\"\nreason = \"never expires\"\n\
        [[failure]]\nid = \"M1.3\"\nreason = \"never expires\"\n\
        [[failure]]\nid = \"E1.1\"\nreason = \"listed by mistake\"\n";
    config.expectations = Some(("fake".into(), Expectations::parse(list).unwrap()));
    run(&config, &all_cases(), Duration::from_secs(60)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn chromium_shows_the_documentation_tables_coloured_by_outcome() {
    let Some(chromium) = chromium() else { return };
    let report = report().await;
    let dir = std::env::temp_dir().join(format!("html-{}", uuid::Uuid::new_v4().simple()));
    report.write(&dir).unwrap();
    let page = dir.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") || !html.contains("<link") && !html.contains("src="),
        "the page loads nothing from elsewhere"
    );

    let dom = render(&chromium, &page, &["--dump-dom".to_string()]);
    // The example tables: columns the container's defaultTtl, rows the
    // item's ttl, in the documentation's order.
    let table_e = section(&dom, "<table class=\"grid\" id=\"table-E\">");
    assert_eq!(
        headers(&table_e, "<thead>", "</thead>"),
        ["null", "-1", "1000"],
        "{table_e}"
    );
    assert_eq!(row_headers(&table_e), ["absent", "-1", "2000"]);
    assert_eq!(cell_status(&table_e, "E1.1"), "unexpected-pass");
    assert_eq!(cell_status(&table_e, "E1.2"), "passed");
    assert_eq!(cell_status(&table_e, "E3.1"), "expected-failure");
    assert_eq!(cell_status(&table_e, "E3.3"), "failed");
    let table_m = section(&dom, "<table class=\"grid\" id=\"table-M\">");
    assert_eq!(
        headers(&table_m, "<thead>", "</thead>"),
        ["missing", "null", "-1", "1000"]
    );
    assert_eq!(row_headers(&table_m), ["absent", "-1", "500"]);
    assert_eq!(cell_status(&table_m, "M1.3"), "expected-failure");
    assert_eq!(cell_status(&table_m, "M3.2"), "failed");
    // Each case opens onto its timeline, expected beside observed.
    assert!(dom.contains("<td>@1500 read a</td><td>absent</td><td>visible</td>"));
    // The other areas are lists; the run's facts come first.
    assert!(dom.contains("<ul class=\"cases\" id=\"area-lifecycle\">"));
    assert!(dom.contains("<dt>target</dt>") && dom.contains("<dt>clock</dt>"));
    assert!(dom.contains("<dt>time scale</dt><dd>none: the target's test clock"));
    assert!(dom.contains("<dd>fake</dd>"), "the expectations are named");

    // On screen, every status that occurs has its colour.
    let shot = dir.join("report.png");
    render(
        &chromium,
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,2200".to_string(),
        ],
    );
    let pixels = colours(&shot);
    for (status, rgb) in [
        ("passed", [0xc8, 0xe6, 0xc9]),
        ("failed", [0xef, 0x9a, 0x9a]),
        ("expected-failure", [0xff, 0xe0, 0x82]),
        ("unexpected-pass", [0xce, 0x93, 0xd8]),
    ] {
        let count = pixels.iter().filter(|p| **p == rgb).count();
        assert!(count > 2000, "{status}: {count} pixels of {rgb:?}");
    }
}

/// The text from `start` to the end of its table.
fn section(dom: &str, start: &str) -> String {
    let from = dom
        .find(start)
        .unwrap_or_else(|| panic!("{start} in the page"));
    let to = dom[from..]
        .find("</table>\n")
        .map(|i| from + i)
        .unwrap_or(dom.len());
    dom[from..to].to_string()
}

/// The `<th>` texts between `open` and `close`, without the corner.
fn headers(table: &str, open: &str, close: &str) -> Vec<String> {
    let from = table.find(open).unwrap();
    let to = table[from..].find(close).unwrap() + from;
    ths(&table[from..to]).into_iter().skip(1).collect()
}

/// The row headers of the grid: rows that start with a `<th>` followed by
/// cells (the timelines inside the cells have rows of their own).
fn row_headers(table: &str) -> Vec<String> {
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr><th>")
        .skip(1)
        .filter_map(|row| {
            let (label, rest) = row.split_once("</th>")?;
            rest.starts_with("<td").then(|| label.to_string())
        })
        .collect()
}

fn ths(html: &str) -> Vec<String> {
    html.split("<th>")
        .skip(1)
        .map(|rest| {
            let text = &rest[..rest.find("</th>").unwrap()];
            text.replace("<code>", "").replace("</code>", "")
        })
        .collect()
}

/// The class of the `<td>` holding a case.
fn cell_status(table: &str, id: &str) -> String {
    let at = table
        .find(&format!("data-case=\"{id}\""))
        .unwrap_or_else(|| panic!("{id} in the table"));
    let td = table[..at].rfind("<td class=\"").unwrap();
    let class = &table[td + "<td class=\"".len()..];
    class[..class.find('"').unwrap()].to_string()
}

fn colours(png: &Path) -> Vec<[u8; 3]> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    buffer[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}
