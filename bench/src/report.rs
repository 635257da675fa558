//! The results of a run as the Markdown tables written to `results.md`
//! and printed (the model itself, written to `results.json`, is
//! `results.rs`).

use std::fmt::Write as _;

use crate::figures::{count, mib, ms};
use crate::load::Throughput;
use crate::measure::batch::BatchResults;
use crate::measure::direct;
use crate::measure::isolation;
use crate::measure::persistence;
use crate::measure::purge::Purge;
use crate::measure::ranges;
use crate::measure::scripts::ScriptsResults;
use crate::measure::search::SearchResults;
use crate::results::{Results, TargetResults};
use crate::stats::Latency;

fn latency_cells(latency: &Option<Latency>) -> (String, String) {
    match latency {
        Some(l) => (ms(l.p50_us), ms(l.p99_us)),
        None => ("–".into(), "–".into()),
    }
}

fn or_dash<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "–".to_string(), show)
}

impl Results {
    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        let m = &self.machine;
        let s = &self.settings;
        let _ = writeln!(md, "# cosmos-bench results\n");
        if let Some(label) = &self.label {
            let _ = writeln!(md, "Revision: `{label}`  ");
        }
        let _ = writeln!(
            md,
            "Machine: {} CPUs ({}), {} RAM, Linux {}; load average {} at the start, {} at the end.  ",
            m.cpus,
            m.cpu_model,
            mib(m.memory_bytes),
            m.kernel,
            m.load_average_start,
            m.load_average_end
        );
        let _ = writeln!(
            md,
            "Load: {}-byte items; {} s warm-up + {} s window per point measurement; \
             one keep-alive HTTP/1.1 connection per concurrent worker; client runtime {} threads, unpinned.\n",
            s.item_bytes,
            s.window.warmup.as_secs_f64(),
            s.window.measure.as_secs_f64(),
            s.client_threads
        );
        for t in &self.targets {
            let _ = writeln!(md, "- **{}**: {}", t.name, t.description);
        }
        md.push('\n');

        md.push_str("## Targets\n\n| target | measured | |\n|---|---|---|\n");
        for c in &self.checks {
            let verdict = match c.pass {
                Some(true) => "pass",
                Some(false) => "**miss**",
                None => "not measured",
            };
            let _ = writeln!(md, "| {} | {} | {} |", c.target, c.measured, verdict);
        }

        md.push_str("\n## Startup and memory\n\n");
        self.startup_and_memory(&mut md);

        for (title, pick) in [
            (
                "Point reads (random item, `GET .../docs/{id}`)",
                (|t: &TargetResults| &t.reads) as fn(&TargetResults) -> &Vec<Throughput>,
            ),
            (
                "Point writes (upsert of a random existing item)",
                |t: &TargetResults| &t.writes,
            ),
        ] {
            let _ = writeln!(md, "\n## {title}\n");
            md.push_str(
                "| target | concurrency | req/s | p50 | p99 | p99.9 | server CPU µs/req | client CPU µs/req | errors |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            );
            for t in &self.targets {
                for r in pick(t) {
                    let (p50, p99) = latency_cells(&r.latency);
                    let _ = writeln!(
                        md,
                        "| {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |",
                        t.name,
                        r.concurrency,
                        count(r.per_second),
                        p50,
                        p99,
                        or_dash(r.latency.as_ref(), |l| ms(l.p999_us)),
                        or_dash(r.server_cpu_us_per_request, |v| format!("{v:.1}")),
                        r.client_cpu_us_per_request,
                        r.errors
                    );
                }
            }
        }

        md.push_str("\n## Ratios\n\n| operation | concurrency | emulator / | req/s | ratio |\n|---|---:|---|---:|---:|\n");
        for r in &self.ratios {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} vs {} | {:.2} |",
                r.operation,
                r.concurrency,
                r.versus,
                count(r.emulator_per_second),
                count(r.other_per_second),
                r.ratio
            );
        }

        md.push_str("\n## Queries (concurrency 1, every page)\n\n| target | items | query | runs | pages | p50 | p99 | note |\n|---|---:|---|---:|---:|---:|---:|---|\n");
        for t in &self.targets {
            for q in &t.queries {
                let (p50, p99) = latency_cells(&q.latency);
                let _ = writeln!(
                    md,
                    "| {} | {} | `{}` | {} | {} | {} | {} | {} |",
                    t.name,
                    count(q.items as f64),
                    q.query,
                    q.runs,
                    q.pages,
                    p50,
                    p99,
                    q.error.as_deref().unwrap_or("")
                );
            }
        }

        md.push_str("\n## Change feed (latest version, from the beginning, pages of 1,000)\n\n| target | items | pages | seconds | items/s | note |\n|---|---:|---:|---:|---:|---|\n");
        for t in &self.targets {
            for f in &t.change_feed {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {:.3} | {} | {} |",
                    t.name,
                    count(f.items as f64),
                    f.pages,
                    f.seconds,
                    count(f.items_per_second),
                    f.error.as_deref().unwrap_or("")
                );
            }
        }

        md.push_str("\n## Transactional batch and bulk (emulator)\n\n");
        match &self.batch {
            Some(b) => batch_table(&mut md, b),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## Stored procedures and UDFs (emulator)\n\n");
        match &self.scripts {
            Some(r) => scripts_table(&mut md, r),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## Vector and full-text search (emulator)\n\n");
        match &self.search {
            Some(s) => search_table(&mut md, s),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## TTL purge (emulator)\n\n");
        match &self.purge {
            Some(p) => purge_table(&mut md, p),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## One partition key range beside ten (emulator)\n\n");
        match &self.ranges {
            Some(r) => ranges::markdown(&mut md, r),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## Persistence: `--data-dir` beside in memory (emulator)\n\n");
        match &self.persistence {
            Some(p) => persistence::markdown(&mut md, p),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## Test isolation: reset, snapshot and restore (emulator)\n\n");
        match &self.isolation {
            Some(rows) => md.push_str(&isolation::markdown(rows)),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## Direct mode (RNTBD) beside HTTPS (emulator)\n\n");
        match &self.direct {
            Some(d) => direct::markdown(&mut md, d),
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## Conformance suite against a running emulator\n\n");
        match &self.conformance {
            Some(c) => {
                let _ = writeln!(
                    md,
                    "`cosmos-conformance` (release), spawn to exit, emulator already up: median {:.2} s of {} runs ({}); every run {}.",
                    c.median_seconds,
                    c.seconds.len(),
                    c.seconds
                        .iter()
                        .map(|s| format!("{s:.2} s"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if c.passed { "exited 0" } else { "did NOT exit 0" }
                );
            }
            None => md.push_str("Not measured (see the notes).\n"),
        }

        md.push_str("\n## The load generator's own cost\n\n");
        self.harness(&mut md);

        if !self.notes.is_empty() {
            md.push_str("\n## Notes\n\n");
            for note in &self.notes {
                let _ = writeln!(md, "- {note}");
            }
        }
        md
    }

    fn startup_and_memory(&self, md: &mut String) {
        let names: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
        let _ = writeln!(md, "| | {} |", names.join(" | "));
        let _ = writeln!(md, "|---|{}", "---:|".repeat(names.len()));
        let row = |md: &mut String, label: &str, cell: &dyn Fn(&TargetResults) -> String| {
            let cells: Vec<String> = self.targets.iter().map(cell).collect();
            let _ = writeln!(md, "| {label} | {} |", cells.join(" | "));
        };
        let runs = self
            .targets
            .iter()
            .find_map(|t| t.startup.as_ref().map(|s| s.runs))
            .unwrap_or(0);
        row(
            md,
            &format!("ready: spawn → first 2xx (median of {runs})"),
            &|t| {
                or_dash(t.startup.as_ref(), |s| {
                    format!("{:.1} ms", s.median_ready_ms)
                })
            },
        );
        row(md, "spawn → `listening on` line (median)", &|t| {
            or_dash(t.startup.as_ref(), |s| {
                format!("{:.1} ms", s.median_line_ms)
            })
        });
        row(md, "idle RSS", &|t| or_dash(t.idle_rss_bytes, mib));
        row(md, "RSS with an empty container", &|t| {
            or_dash(t.empty_container_rss_bytes, mib)
        });
        let sizes: Vec<usize> = self
            .targets
            .iter()
            .flat_map(|t| t.memory.iter().map(|m| m.items))
            .fold(Vec::new(), |mut v, s| {
                if !v.contains(&s) {
                    v.push(s);
                }
                v
            });
        for size in sizes {
            row(
                md,
                &format!(
                    "RSS with {} items (per item above empty)",
                    count(size as f64)
                ),
                &|t| {
                    or_dash(t.memory.iter().find(|m| m.items == size), |m| {
                        format!("{} ({:.0} B)", mib(m.rss_bytes), m.bytes_per_item)
                    })
                },
            );
            row(
                md,
                &format!("loading them: creates/s (up to {})", count(size as f64)),
                &|t| {
                    or_dash(t.memory.iter().find(|m| m.items == size), |m| {
                        count(m.load.per_second)
                    })
                },
            );
        }
        row(md, "point-read answer body", &|t| {
            or_dash(t.point_read_body_bytes, |b| format!("{b} B"))
        });
    }

    fn harness(&self, md: &mut String) {
        let bare = self.targets.iter().find(|t| t.name == "bare");
        match bare.and_then(|b| {
            b.reads
                .iter()
                .max_by(|x, y| x.per_second.total_cmp(&y.per_second))
        }) {
            Some(best) => {
                let _ = writeln!(
                    md,
                    "Against the bare server the client reached {} req/s (concurrency {}), spending {:.1} µs of CPU per request \
                     (the server {}). On {} CPUs shared by client and server, client CPU per request is what every \
                     throughput figure above pays besides the server's own; the `client CPU µs/req` column gives it per measurement.",
                    count(best.per_second),
                    best.concurrency,
                    best.client_cpu_us_per_request,
                    or_dash(best.server_cpu_us_per_request, |v| format!("{v:.1} µs")),
                    self.machine.cpus
                );
            }
            None => md.push_str("The bare server was not measured.\n"),
        }
    }
}

fn batch_table(md: &mut String, b: &BatchResults) {
    let _ = writeln!(
        md,
        "New {}-byte items created in a fresh emulator, each row in a container of its own, {} operations per batch or bulk request (every answer 2xx; a batch of each kind checked first to answer 200 with a 201 per operation).\n",
        b.item_bytes,
        crate::measure::batch::OPERATIONS
    );
    md.push_str("| how | concurrency | items/s | requests/s | p50 | p99 | server CPU µs/item | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in &b.rows {
        let per_item = row.items_per_second / row.load.per_second.max(1e-9);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            row.way.describe(),
            row.load.concurrency,
            count(row.items_per_second),
            count(row.load.per_second),
            row.load
                .latency
                .as_ref()
                .map_or("–".into(), |l| ms(l.p50_us)),
            row.load
                .latency
                .as_ref()
                .map_or("–".into(), |l| ms(l.p99_us)),
            row.load
                .server_cpu_us_per_request
                .map_or("–".into(), |v| format!("{:.1}", v / per_item)),
            row.load.errors
        );
    }
    let items = |way, concurrency| {
        b.rows
            .iter()
            .find(|r| r.way == way && r.load.concurrency == concurrency)
            .map(|r| r.items_per_second)
    };
    use crate::measure::batch::Way;
    for (way, concurrency) in [(Way::Batch, 1), (Way::Bulk, 16)] {
        if let (Some(many), Some(single)) =
            (items(way, concurrency), items(Way::Single, concurrency))
        {
            let _ = writeln!(
                md,
                "\n{} at concurrency {concurrency}: {:.1}× the items/s of single creates.",
                way.describe(),
                many / single.max(1e-9)
            );
        }
    }
}

fn search_table(md: &mut String, r: &SearchResults) {
    use crate::measure::search::{bytes, QUERY_ROUNDS};
    let _ = writeln!(
        md,
        "A fresh emulator. Vector items of {} dimensions (cosine, float32; {} of JSON each), created at concurrency 8; every answer checked against the exact ranking; median of {QUERY_ROUNDS} runs after an untimed one, as plain REST on the container's one range.\n",
        r.dimensions,
        bytes(r.vector_item_bytes as f64)
    );
    md.push_str("| items | creates/s | RSS | RSS per item |\n|---:|---:|---:|---:|\n");
    for size in &r.vector_sizes {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            count(size.items as f64),
            count(size.load.per_second),
            mib(size.rss_bytes),
            bytes(size.bytes_per_item)
        );
    }
    md.push_str("\n| query | items | median | runs (ms) |\n|---|---:|---:|---|\n");
    for q in r.vector_queries.iter().chain([&r.text_query]) {
        let runs: Vec<String> = q.runs_ms.iter().map(|v| format!("{v:.1}")).collect();
        let _ = writeln!(
            md,
            "| `{}` | {} | {:.1} ms | {} |",
            q.query,
            count(q.items as f64),
            q.median_ms,
            runs.join(", ")
        );
    }
    let median = |items| {
        r.vector_queries
            .iter()
            .find(|q| q.items == items && !q.query.contains("WHERE"))
            .map(|q| q.median_ms)
    };
    if let (Some(small), Some(large)) = (median(10_000), median(100_000)) {
        let _ = writeln!(
            md,
            "\nTen times the items take {:.1}× the time (top-10 without a filter).",
            large / small.max(1e-9)
        );
    }
    let _ = writeln!(
        md,
        "\nFull text: {} texts of twelve words, created at {} items/s.",
        count(r.text_items as f64),
        count(r.text_load.per_second)
    );
}

fn scripts_table(md: &mut String, r: &ScriptsResults) {
    use crate::measure::batch::OPERATIONS;
    use crate::measure::scripts::{Way, QUERY_ROUNDS, ROWS, UDF};
    let _ = writeln!(
        md,
        "A fresh emulator. {} items of {} B over {} partitions; an operation reads one and upserts a small item beside it, in its partition: one execution of the stored procedure, or the same point read then upsert as two requests (latencies per request; one operation of each checked first).\n",
        count(r.sproc_items as f64),
        r.item_bytes,
        crate::documents::PARTITIONS
    );
    md.push_str("| how | concurrency | operations/s | requests/s | p50 / request | p99 / request | server CPU µs/operation | errors |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in &r.executions {
        let l = &row.load;
        let per_operation = row.way.requests_per_operation() as f64;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            row.way.describe(),
            l.concurrency,
            count(row.operations_per_second),
            count(l.per_second),
            l.latency.as_ref().map_or("–".into(), |l| ms(l.p50_us)),
            l.latency.as_ref().map_or("–".into(), |l| ms(l.p99_us)),
            l.server_cpu_us_per_request
                .map_or("–".into(), |v| format!("{:.1}", v * per_operation)),
            l.errors
        );
    }
    for (_, concurrency) in ROWS.iter().filter(|(way, _)| *way == Way::Sproc) {
        let rate = |way| {
            r.executions
                .iter()
                .find(|e| e.way == way && e.load.concurrency == *concurrency)
                .map(|e| e.operations_per_second)
        };
        if let (Some(sproc), Some(plain)) = (rate(Way::Sproc), rate(Way::Plain)) {
            let _ = writeln!(
                md,
                "\nAt concurrency {concurrency} the stored procedure does {:.2}× the operations/s of the two plain requests.",
                sproc / plain.max(1e-9)
            );
        }
    }
    let _ = writeln!(
        md,
        "\n{} items of {} B in one logical partition (loaded in batches at {} items/s); `udf.double` = `{UDF}`; each query in that partition, every page (`x-ms-max-item-count: -1`), every answer checked ({} values); median of {} runs after an untimed round, the queries taking turns.\n",
        count(r.query_items as f64),
        r.item_bytes,
        count(r.query_load.per_second * OPERATIONS as f64),
        count(r.query_items as f64),
        QUERY_ROUNDS
    );
    md.push_str("| query | pages | median | runs | µs per item | UDF cost per item |\n|---|---:|---:|---|---:|---:|\n");
    for (i, q) in r.queries.iter().enumerate() {
        let runs: Vec<String> = q.runs_ms.iter().map(|v| format!("{v:.1}")).collect();
        let _ = writeln!(
            md,
            "| `{}` | {} | {:.1} ms | {} | {:.2} | {} |",
            q.query,
            q.pages,
            q.median_ms,
            runs.join(", "),
            q.median_ms * 1e3 / r.query_items as f64,
            match r.udf_us_per_item(q) {
                Some(us) if i > 0 => format!("{us:+.2} µs"),
                _ => "–".into(),
            }
        );
    }
}

fn purge_table(md: &mut String, p: &Purge) {
    let s = &p.settings;
    let _ = writeln!(
        md,
        "{} items of {} B with `ttl: 60` and {} with `ttl: -1` in one container (`defaultTtl: -1`), loaded at {} creates/s \
         (concurrency {}); {} reader(s) read the lasting items throughout; the test clock moves 61 s; the purge is \
         complete when `GET /_emulator/stats` shows only the lasting items stored.\n",
        count(s.items as f64),
        s.item_bytes,
        count(s.kept as f64),
        count(p.fill.per_second),
        s.fill_concurrency,
        s.readers
    );
    md.push_str("| | |\n|---|---:|\n");
    let _ = writeln!(
        md,
        "| purge time (clock advance → all expired items gone) | {:.3} s |",
        p.purge_seconds
    );
    let _ = writeln!(md, "| RSS, empty container | {} |", mib(p.rss_empty_bytes));
    let _ = writeln!(
        md,
        "| RSS, full | {} ({:.0} B per item) |",
        mib(p.rss_full_bytes),
        (p.rss_full_bytes.saturating_sub(p.rss_empty_bytes)) as f64
            / (s.items + s.kept).max(1) as f64
    );
    let _ = writeln!(
        md,
        "| RSS when the purge completed | {} |",
        mib(p.rss_purged_bytes)
    );
    let _ = writeln!(
        md,
        "| RSS one second later, {} TTL deletes retained in the change log | {} |",
        count(s.items as f64),
        mib(p.rss_settled_bytes)
    );
    // An upper bound: what the process holds beyond its empty container,
    // over the deletes the log retains (the allocator's slack included).
    let _ = writeln!(
        md,
        "| memory per retained TTL delete (RSS one second later − RSS empty) / items | at most {:.0} B |",
        p.rss_settled_bytes.saturating_sub(p.rss_empty_bytes) as f64 / s.items.max(1) as f64
    );
    let _ = writeln!(
        md,
        "| RSS once the log dropped them (clock past the retention, `POST /_emulator/purge`) | {} |",
        mib(p.rss_log_dropped_bytes)
    );
    for (label, latency) in [
        ("reads in the second before", &p.reads_before),
        ("reads during the purge", &p.reads_during),
        ("reads in the half second after", &p.reads_after),
    ] {
        let _ = writeln!(
            md,
            "| {label}: count, p50, p99, max | {} |",
            or_dash(latency.as_ref(), |l| format!(
                "{}, {}, {}, {}",
                l.count,
                ms(l.p50_us),
                ms(l.p99_us),
                ms(l.max_us)
            ))
        );
    }
    let _ = writeln!(md, "| read errors | {} |", p.read_errors);
    // About ten points: every n-th sample and the last.
    let step = p.progress.len().div_ceil(10).max(1);
    let progress: Vec<String> = p
        .progress
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i + 1 == p.progress.len())
        .map(|(_, point)| point)
        .map(|(t, left)| format!("{:.2} s: {}", t, count(*left as f64)))
        .collect();
    let _ = writeln!(
        md,
        "\nProgress (expired items still stored): {}.",
        progress.join("; ")
    );
}
