//! Request units: what each operation costs, in the service's currency.
//! Microsoft publishes no formula, only points (`docs/src/request-units.md`
//! has them with their sources); this model passes through every one of
//! them and grows as the service's charges grow, with the size of the
//! document, the paths it indexes and the documents a query reads:
//!
//! - a point read of 1 KB costs 1 RU, of 100 KB 10 RU (linear between, 1
//!   at least);
//! - an insert of 1 KB with no indexing about 5.5 RU, scaled by size the
//!   way reads are, plus [`INDEXED_TERM_RU`] per indexed value; a replace
//!   twice an insert;
//! - reads (points, queries, feeds) cost double under Strong and Bounded
//!   Staleness, which read a quorum;
//! - a query costs a base, then by the documents it loads and the bytes
//!   it returns: 1,000 items of 1 KB read and returned cost about 1,000.
//!   The same query on the same data always costs the same.
//!
//! `ChargeModel::Fixed` (`--ru-charges fixed`) keeps the three constants
//! the emulator sent before the model, for tests that pin them. Nothing
//! here knows HTTP: the handlers say what they did, this says its price.

/// How charges are computed (`--ru-charges`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChargeModel {
    /// The documented points (the default).
    #[default]
    Documented,
    /// 1 RU a read, 5.71 a write, 2.89 a query, whatever they did.
    Fixed,
}

impl ChargeModel {
    /// `documented` or `fixed`, as the flag names it.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "documented" => Some(ChargeModel::Documented),
            "fixed" => Some(ChargeModel::Fixed),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChargeModel::Documented => "documented",
            ChargeModel::Fixed => "fixed",
        }
    }
}

/// The fixed model's constants: what every response carried before.
const FIXED_READ: f64 = 1.0;
const FIXED_WRITE: f64 = 5.71;
const FIXED_QUERY: f64 = 2.89;

/// An insert of 1 KB with indexing off ("around ~5.5 RUs").
const INSERT_RU: f64 = 5.5;
/// A write of 100 KB: about 50 RU, as a read of 100 KB is about 10.
const WRITE_100_KB_RU: f64 = 50.0;
/// What each indexed value adds to a write (not published; chosen so that
/// a 1 KB item of about ten properties with the default policy costs
/// about 7.5 RU, near what the service charges one).
pub const INDEXED_TERM_RU: f64 = 0.2;
/// What any query costs before it reads a document.
const QUERY_BASE_RU: f64 = 2.31;
/// A query's price per document it loads, per KB it loads, and per KB it
/// returns: 1,000 documents of 1 KB read and returned cost ~1,000 RU.
const QUERY_DOCUMENT_RU: f64 = 0.1;
const QUERY_LOADED_KB_RU: f64 = 0.5;
const QUERY_RETURNED_KB_RU: f64 = 0.4;
/// A change feed page's floor (a poll that finds nothing still costs).
const FEED_BASE_RU: f64 = 1.0;
/// Metadata (databases, containers, users, offers, scripts' definitions):
/// charged as before in both models; the service's prices for these are
/// not documented and no budget but the metadata one counts them.
pub const METADATA_READ: Charge = Charge(1.0);
pub const METADATA_WRITE: Charge = Charge(5.71);
/// A stored procedure's execution in the fixed model (the documented one
/// prices what it read and wrote: `http/script_runs.rs`).
pub const SCRIPT_EXECUTION: Charge = Charge(5.0);

/// A number of request units, kept to hundredths as the service sends them.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Charge(f64);

impl Charge {
    pub const ZERO: Charge = Charge(0.0);

    pub fn ru(self) -> f64 {
        self.0
    }

    /// `ru` request units, to hundredths.
    pub fn from_ru(ru: f64) -> Charge {
        Charge::rounded(ru)
    }

    fn rounded(ru: f64) -> Charge {
        Charge((ru * 100.0).round() / 100.0)
    }

    /// The charge as the header writes it: `1`, `5.71`, `10.5`; written
    /// from whole hundredths (a float's shortest form costs several times
    /// more, on every response).
    pub fn to_text(self) -> String {
        self.write_text(&mut [0; 24]).to_owned()
    }

    /// [`Charge::to_text`], written into `room` (a header value copies it
    /// from there: no string, no formatting machinery, on every response).
    pub fn write_text(self, room: &mut [u8; 24]) -> &str {
        let hundredths = (self.0 * 100.0).round().max(0.0) as u64;
        let (mut whole, fraction) = (hundredths / 100, hundredths % 100);
        // From the last digit back: `.5` for `.50`, `.05` kept.
        let mut start = room.len();
        let mut put = |byte: u8| {
            start -= 1;
            room[start] = byte;
        };
        if fraction != 0 {
            if fraction % 10 != 0 {
                put(b'0' + (fraction % 10) as u8);
            }
            put(b'0' + (fraction / 10) as u8);
            put(b'.');
        }
        loop {
            put(b'0' + (whole % 10) as u8);
            whole /= 10;
            if whole == 0 {
                break;
            }
        }
        std::str::from_utf8(&room[start..]).expect("ASCII digits")
    }
}

impl std::ops::Add for Charge {
    type Output = Charge;
    fn add(self, other: Charge) -> Charge {
        Charge::rounded(self.0 + other.0)
    }
}

impl std::iter::Sum for Charge {
    fn sum<I: Iterator<Item = Charge>>(charges: I) -> Charge {
        charges.fold(Charge::ZERO, |total, c| total + c)
    }
}

/// What a write did to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A create, or an upsert that created.
    Insert,
    /// A replace, a patch, or an upsert that replaced.
    Replace,
    Delete,
}

/// Whether reads under this consistency read a quorum (and cost double).
pub fn reads_quorum(consistency: crate::protocol::consistency::Consistency) -> bool {
    use crate::protocol::consistency::Consistency::*;
    matches!(consistency, Strong | BoundedStaleness)
}

/// How a document's size scales a read: 1 up to 1 KB, 10 at 100 KB,
/// linear between and beyond.
fn size_factor(bytes: usize) -> f64 {
    scaled(bytes, 10.0)
}

/// How a document's size scales a write: 1 up to 1 KB, then linear to
/// the 100 KB write's ~50 RU (the 1 KB insert's 5.5 RU times 9.09; the
/// read's factor of 10 made it 55).
fn write_size_factor(bytes: usize) -> f64 {
    scaled(bytes, WRITE_100_KB_RU / INSERT_RU)
}

/// 1 up to 1 KB, `at_100_kb` at 100 KB, linear between and beyond.
fn scaled(bytes: usize, at_100_kb: f64) -> f64 {
    let kb = bytes as f64 / 1024.0;
    (1.0 + (at_100_kb - 1.0) * (kb - 1.0) / 99.0).max(1.0)
}

impl ChargeModel {
    /// A point read of a document of `bytes` (or a failed read: pass 0).
    pub fn read(self, bytes: usize, quorum: bool) -> Charge {
        match self {
            ChargeModel::Fixed => Charge(FIXED_READ),
            ChargeModel::Documented => Charge::rounded(size_factor(bytes) * twice_if(quorum)),
        }
    }

    /// What the service charges for a failure of HTTP `status` (`None`: a
    /// connection that failed with no answer), charged to a request a fault
    /// rule answered instead of running it: an application error the
    /// partition worked out (400, 404, 409, 412, 413, 449...) costs a
    /// failed read's charge ("these charges include requests that do not
    /// complete successfully due to application errors such as 400, 412,
    /// 449, etc."); a refusal before any partition worked on it costs
    /// nothing: a throttled request (429), an authorization failure (401,
    /// 403), a timeout, a gone replica (408, 410), a server error (5xx) or
    /// a broken connection. `docs/src/request-units.md` has the table.
    pub fn failure(self, status: Option<u16>) -> Charge {
        match status {
            None | Some(401 | 403 | 408 | 410 | 429) => Charge::ZERO,
            Some(400..=499) => self.read(0, false),
            Some(_) => Charge::ZERO,
        }
    }

    /// A write of a document of `bytes` holding `indexed_terms` values the
    /// indexing policy indexes (0 with indexing off).
    pub fn write(self, kind: WriteKind, bytes: usize, indexed_terms: usize) -> Charge {
        match self {
            ChargeModel::Fixed => Charge(FIXED_WRITE),
            ChargeModel::Documented => {
                let insert =
                    INSERT_RU * write_size_factor(bytes) + INDEXED_TERM_RU * indexed_terms as f64;
                Charge::rounded(match kind {
                    WriteKind::Insert | WriteKind::Delete => insert,
                    WriteKind::Replace => 2.0 * insert,
                })
            }
        }
    }

    /// A query page (or a read feed page) that loaded `loaded` documents
    /// of `loaded_bytes` in all and returned `returned_bytes`.
    pub fn query(
        self,
        loaded: usize,
        loaded_bytes: usize,
        returned_bytes: usize,
        quorum: bool,
    ) -> Charge {
        match self {
            ChargeModel::Fixed => Charge(FIXED_QUERY),
            ChargeModel::Documented => {
                let ru = QUERY_BASE_RU
                    + QUERY_DOCUMENT_RU * loaded as f64
                    + QUERY_LOADED_KB_RU * kb(loaded_bytes)
                    + QUERY_RETURNED_KB_RU * kb(returned_bytes);
                Charge::rounded(ru * twice_if(quorum))
            }
        }
    }

    /// A read feed page of `documents` returning `bytes`: a query that
    /// loads what it returns, without the query's base. The fixed model
    /// charged it as a read.
    pub fn read_feed(self, documents: usize, bytes: usize, quorum: bool) -> Charge {
        match self {
            ChargeModel::Fixed => Charge(FIXED_READ),
            ChargeModel::Documented => self.change_feed(documents, bytes, quorum),
        }
    }

    /// A change feed page of `documents` changes returning `bytes`.
    pub fn change_feed(self, documents: usize, bytes: usize, quorum: bool) -> Charge {
        match self {
            ChargeModel::Fixed => Charge(FIXED_READ),
            ChargeModel::Documented => {
                let ru = FEED_BASE_RU
                    + QUERY_DOCUMENT_RU * documents as f64
                    + (QUERY_LOADED_KB_RU + QUERY_RETURNED_KB_RU) * kb(bytes);
                Charge::rounded(ru * twice_if(quorum))
            }
        }
    }
}

fn kb(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

fn twice_if(quorum: bool) -> f64 {
    if quorum {
        2.0
    } else {
        1.0
    }
}

/// The values of a document a write indexes: its leaves (numbers, strings,
/// booleans, nulls), system properties (`_rid`, `_ts`, ...) and `id`
/// aside. Excluded paths are not subtracted: an approximation the guide
/// states.
pub fn indexed_terms(document: &serde_json::Map<String, serde_json::Value>) -> usize {
    fn leaves(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Object(map) => map.values().map(leaves).sum(),
            serde_json::Value::Array(items) => items.iter().map(leaves).sum(),
            _ => 1,
        }
    }
    document
        .iter()
        .filter(|(name, _)| !name.starts_with('_') && name.as_str() != "id")
        .map(|(_, value)| leaves(value))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: usize = 1024;

    /// The charge's text is what formatting its hundredths gives.
    #[test]
    fn a_charge_is_written_as_formatting_would_write_it() {
        let formatted = |hundredths: u64| {
            let (whole, fraction) = (hundredths / 100, hundredths % 100);
            match fraction {
                0 => whole.to_string(),
                f if f % 10 == 0 => format!("{whole}.{}", f / 10),
                f => format!("{whole}.{f:02}"),
            }
        };
        let hundredths = (0..2_000).chain([99_999, 123_456_789, 1 << 52]);
        for h in hundredths {
            let charge = Charge(h as f64 / 100.0);
            assert_eq!(charge.to_text(), formatted(h), "{h} hundredths");
        }
        assert_eq!(Charge(-3.0).to_text(), "0");
        assert_eq!(Charge(f64::NAN).to_text(), "0");
    }

    /// Every documented point of `docs/src/request-units.md`, a row each:
    /// what is charged, the model's charge, the documented figure and how
    /// far from it the model may be, and where the figure is published.
    #[test]
    fn the_documented_points() {
        let model = ChargeModel::Documented;
        let insert = |bytes, terms| model.write(WriteKind::Insert, bytes, terms).ru();
        let rows: [(&str, f64, f64, f64, &str); 10] = [
            (
                "1 KB point read",
                model.read(KB, false).ru(),
                1.0,
                0.0,
                "Request Units",
            ),
            (
                "100 KB point read",
                model.read(100 * KB, false).ru(),
                10.0,
                0.0,
                "Request Units",
            ),
            (
                "a read never costs under 1 RU",
                model.read(200, false).ru(),
                1.0,
                0.0,
                "Request Units",
            ),
            (
                "1 KB read under Strong",
                model.read(KB, true).ru(),
                2.0,
                0.0,
                "reads cost twice",
            ),
            (
                "1 KB insert, indexing off",
                insert(KB, 0),
                5.5,
                0.0,
                "Optimize reads and writes cost",
            ),
            (
                "100 KB write",
                insert(100 * KB, 1),
                50.0,
                0.5,
                "Request Units: ~50 RU",
            ),
            (
                "100,000-byte write (the issue's)",
                insert(100_000, 4),
                50.0,
                2.0,
                "about 50 RU",
            ),
            (
                "1 KB replace, twice the insert",
                model.write(WriteKind::Replace, KB, 0).ru(),
                11.0,
                0.0,
                "Optimize reads and writes cost",
            ),
            (
                "1,000 items of 1 KB queried",
                model.query(1000, 1000 * KB, 1000 * KB, false).ru(),
                1000.0,
                10.0,
                "Optimize reads and writes cost",
            ),
            (
                "a 1 KB delete, as the insert",
                model.write(WriteKind::Delete, KB, 0).ru(),
                5.5,
                0.0,
                "(not published)",
            ),
        ];
        for (what, charged, documented, within, source) in rows {
            assert!(
                (charged - documented).abs() <= within + 1e-9,
                "{what}: charged {charged}, documented {documented} ± {within} ({source})"
            );
        }
        assert!(insert(10 * KB, 0) > insert(KB, 0), "writes grow with size");
        assert!(insert(KB, 10) > insert(KB, 0), "and with indexed paths");
    }

    #[test]
    fn a_query_costs_more_as_it_reads_and_returns_more() {
        let model = ChargeModel::Documented;
        let empty = model.query(0, 0, 0, false);
        let reads = model.query(10, 10 * KB, 0, false);
        let returns = model.query(10, 10 * KB, 10 * KB, false);
        assert!(
            empty < reads && reads < returns,
            "{empty:?} {reads:?} {returns:?}"
        );
        assert_eq!(model.query(10, 10 * KB, 0, true).ru(), 2.0 * reads.ru());
    }

    #[test]
    fn a_failure_costs_what_the_service_charges_for_it() {
        for model in [ChargeModel::Documented, ChargeModel::Fixed] {
            for charged in [400, 404, 409, 412, 413, 449] {
                assert_eq!(model.failure(Some(charged)).ru(), 1.0, "{charged}");
            }
            for free in [401, 403, 408, 410, 429, 500, 503] {
                assert_eq!(model.failure(Some(free)).ru(), 0.0, "{free}");
            }
            assert_eq!(model.failure(None).ru(), 0.0, "a broken connection");
        }
    }

    #[test]
    fn the_fixed_model_keeps_the_old_constants() {
        let model = ChargeModel::Fixed;
        assert_eq!(model.read(100 * KB, true).to_text(), "1");
        assert_eq!(
            model.write(WriteKind::Replace, 100 * KB, 50).to_text(),
            "5.71"
        );
        assert_eq!(model.query(1000, 1000 * KB, 0, true).to_text(), "2.89");
    }

    #[test]
    fn charges_read_as_the_service_writes_them() {
        assert_eq!(Charge(1.0).to_text(), "1");
        assert_eq!(Charge::rounded(5.714).to_text(), "5.71");
        assert_eq!(Charge::rounded(10.5).to_text(), "10.5");
        assert_eq!((Charge(0.1) + Charge(0.2)).to_text(), "0.3");
        assert_eq!(Charge::rounded(1.0064).to_text(), "1.01");
        assert_eq!(Charge::rounded(1234.5).to_text(), "1234.5");
        assert_eq!(Charge::ZERO.to_text(), "0");
    }

    #[test]
    fn indexed_terms_count_the_leaves_a_client_wrote() {
        let document = serde_json::json!({
            "id": "a", "pk": "p", "n": 1, "tags": ["x", "y"],
            "address": {"city": "Oslo", "zip": null}, "_ts": 5, "_rid": "r"
        });
        assert_eq!(indexed_terms(document.as_object().unwrap()), 6);
    }
}
