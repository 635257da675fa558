//! `cosmos-bench`: runs every measurement and writes `results.json` and
//! `results.md` to the output directory. `cargo xtask bench` builds the
//! release binaries and calls it; see bench/README.md.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use cosmos_bench::load::Window;
use cosmos_bench::measure::isolation::IsolationSettings;
use cosmos_bench::measure::persistence::PersistenceSettings;
use cosmos_bench::measure::purge::PurgeSettings;
use cosmos_bench::measure::query::QueryKind;
use cosmos_bench::run;
use cosmos_bench::settings::{Parts, Paths, Settings};

#[derive(Debug, Parser)]
#[command(about = "Benchmarks the emulator beside a peer emulator and the bare HTTP stack")]
struct Cli {
    /// Directory holding cosmos-emulator, bare-server and
    /// cosmos-conformance (release builds).
    #[arg(long)]
    bin_dir: PathBuf,
    /// Where @vercel/cosmosdb-server is installed (node_modules inside).
    #[arg(long)]
    peer_dir: Option<PathBuf>,
    /// Talk to the peer over plain HTTP instead of its default HTTPS.
    #[arg(long)]
    peer_http: bool,
    /// The bare server answers with content-type alone, not with the
    /// emulator's point-read headers (the client then parses less from it).
    #[arg(long)]
    bare_plain: bool,
    /// The conformance fixtures (cases/ and expectations/).
    #[arg(long)]
    fixtures: PathBuf,
    /// Where results.json, results.md and logs/ go.
    #[arg(long)]
    out_dir: PathBuf,
    /// Recorded in the results, e.g. the git revision.
    #[arg(long)]
    label: Option<String>,
    /// Parts to run, comma-separated:
    /// emulator,bare,peer,batch,scripts,search,purge,ranges,persistence,isolation,direct,conformance.
    #[arg(
        long,
        default_value = "emulator,bare,peer,batch,scripts,search,purge,ranges,persistence,isolation,direct,conformance"
    )]
    only: String,
    /// Seconds of each point-load window.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Seconds of load before each window.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Concurrencies of the point loads.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// Queries to measure, comma-separated: filter,count,join,group-by,top,
    /// distinct,functions,average,range,order-first-page,order-tenth-page,
    /// count-range, max, max-count (see bench/README.md).
    #[arg(
        long,
        default_value = "filter,count,join,group-by,top,distinct,functions,average,range,order-first-page,order-tenth-page,count-range,max,max-count"
    )]
    queries: String,
    /// Item counts for memory and queries (point loads use the largest).
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    sizes: Vec<usize>,
    /// Bytes of JSON per item.
    #[arg(long, default_value_t = 1024)]
    item_bytes: usize,
    #[arg(long, default_value_t = 15)]
    startup_runs: usize,
    /// Expiring items in the purge measurement.
    #[arg(long, default_value_t = 1_000_000)]
    purge_items: usize,
    /// Concurrent readers while the purge runs.
    #[arg(long, default_value_t = 1)]
    purge_readers: usize,
    /// Persistence: seconds of each write and read window.
    #[arg(long, default_value_t = 1.0)]
    persistence_seconds: f64,
    /// Persistence: seconds of load before each window.
    #[arg(long, default_value_t = 0.25)]
    persistence_warmup: f64,
    /// Persistence: items each emulator of the write and read loads holds.
    #[arg(long, default_value_t = 10_000)]
    persistence_items: usize,
    /// Persistence: item counts on disk the start-up is timed at (the
    /// largest also gives memory, disk and compaction).
    #[arg(long, value_delimiter = ',', default_value = "0,10000,100000")]
    persistence_sizes: Vec<usize>,
    /// Persistence: timed starts per item count.
    #[arg(long, default_value_t = 5)]
    persistence_startup_runs: usize,
    /// Persistence: where the temporary data directories go.
    #[arg(long, default_value = "/tmp")]
    persistence_temp: PathBuf,
    /// Isolation: item counts reset, snapshot and restore are timed at.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    isolation_sizes: Vec<usize>,
    /// Isolation: rounds of snapshot, restore, reset, restore per count.
    #[arg(long, default_value_t = 5)]
    isolation_runs: usize,
    #[arg(long, default_value_t = 3)]
    conformance_runs: usize,
    /// Worker threads of the load generator's runtime.
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// The master key to sign with.
    #[arg(long, default_value = cosmos_emulator::WELL_KNOWN_KEY, hide_default_value = true)]
    key: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let parts = match parse_parts(&cli.only) {
        Ok(parts) => parts,
        Err(e) => {
            eprintln!("cosmos-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let queries = match QueryKind::parse_list(&cli.queries) {
        Ok(queries) => queries,
        Err(e) => {
            eprintln!("cosmos-bench: --queries: {e}");
            return ExitCode::from(2);
        }
    };
    let settings = Settings {
        window: Window {
            warmup: Duration::from_secs_f64(cli.warmup),
            measure: Duration::from_secs_f64(cli.seconds),
        },
        startup_runs: cli.startup_runs,
        item_bytes: cli.item_bytes,
        sizes: cli.sizes.clone(),
        concurrencies: cli.concurrency.clone(),
        fill_concurrency: 32,
        queries,
        query_budget: Duration::from_secs(2),
        query_runs: (3, 200),
        purge: PurgeSettings {
            items: cli.purge_items,
            kept: 1_000,
            item_bytes: cli.item_bytes,
            readers: cli.purge_readers,
            fill_concurrency: 32,
            limit: Duration::from_secs(60),
        },
        persistence: PersistenceSettings {
            window: Window {
                warmup: Duration::from_secs_f64(cli.persistence_warmup),
                measure: Duration::from_secs_f64(cli.persistence_seconds),
            },
            concurrencies: cli.concurrency.clone(),
            read_concurrency: 16,
            write_items: cli.persistence_items,
            startup_sizes: cli.persistence_sizes.clone(),
            startup_runs: cli.persistence_startup_runs,
            item_bytes: cli.item_bytes,
            fill_concurrency: 32,
            compaction_concurrency: 16,
            temp_root: cli.persistence_temp.clone(),
        },
        isolation: IsolationSettings {
            sizes: cli.isolation_sizes.clone(),
            runs: cli.isolation_runs,
            item_bytes: cli.item_bytes,
            fill_concurrency: 32,
            temp_root: cli.persistence_temp.clone(),
        },
        conformance_runs: cli.conformance_runs,
        client_threads: cli.client_threads,
        peer_tls: !cli.peer_http,
        bare_plain: cli.bare_plain,
    };
    let paths = Paths {
        bin_dir: cli.bin_dir.clone(),
        peer_dir: cli.peer_dir.clone(),
        fixtures: cli.fixtures.clone(),
        out_dir: cli.out_dir.clone(),
    };
    if let Err(e) = std::fs::create_dir_all(&paths.out_dir) {
        eprintln!("cosmos-bench: {}: {e}", paths.out_dir.display());
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cli.client_threads.max(1))
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cosmos-bench: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let results = runtime.block_on(run::run(&paths, &settings, parts, &cli.key, cli.label));
    let markdown = results.to_markdown();
    let json = serde_json::to_string_pretty(&results).expect("results serialise");
    for (name, text) in [("results.json", &json), ("results.md", &markdown)] {
        let path = paths.out_dir.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("cosmos-bench: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!("{markdown}");
    eprintln!(
        "[bench] wrote {} and {}",
        paths.out_dir.join("results.json").display(),
        paths.out_dir.join("results.md").display()
    );
    ExitCode::SUCCESS
}

fn parse_parts(list: &str) -> Result<Parts, String> {
    let mut parts = Parts {
        emulator: false,
        bare: false,
        peer: false,
        batch: false,
        scripts: false,
        search: false,
        purge: false,
        conformance: false,
        ranges: false,
        persistence: false,
        isolation: false,
        direct: false,
    };
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "emulator" => parts.emulator = true,
            "bare" => parts.bare = true,
            "peer" => parts.peer = true,
            "batch" => parts.batch = true,
            "scripts" => parts.scripts = true,
            "search" => parts.search = true,
            "purge" => parts.purge = true,
            "conformance" => parts.conformance = true,
            "ranges" => parts.ranges = true,
            "persistence" => parts.persistence = true,
            "isolation" => parts.isolation = true,
            "direct" => parts.direct = true,
            other => {
                return Err(format!(
                "--only: unknown part {other:?} (emulator, bare, peer, batch, scripts, search, purge, ranges, persistence, isolation, direct, conformance)"
            ))
            }
        }
    }
    Ok(parts)
}
