//! The scalar system functions of the NoSQL query language, one module per
//! family of Microsoft's function reference ("System functions"), each with
//! its table tests (the documented examples as rows) next to it.
//!
//! The evaluator calls [`call`] with the arguments already evaluated
//! (`None` is `undefined`), the name upper-cased by the parser and the
//! run's context (the budget that what a function builds is charged to,
//! the instant `GetCurrent*` return); the
//! preparation of a query asks [`is_known`] so that an unknown name is a 400
//! before any item is read. Every function is total: wrong argument types or
//! counts give `undefined`, as the service does, and nothing panics,
//! overflows or yields a number JSON cannot hold.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::OnceLock;

use serde_json::Value;

use super::RunContext;

mod array;
mod conditional;
mod conversion;
mod datetime;
mod integer;
mod math;
mod object;
mod regex;
pub(super) mod spatial;
mod string;
mod type_check;

/// One function: a call's arguments in, a value or `undefined` out.
type Function = fn(&Args<'_>) -> Option<Value>;

/// The arguments of one call, evaluated (`None` is `undefined`), and the
/// run it is part of. Reads as the slice of arguments; [`Args::run`] for
/// the rest.
pub struct Args<'a> {
    values: &'a [Option<Value>],
    run: &'a RunContext,
}

impl<'a> Args<'a> {
    pub fn new(run: &'a RunContext, values: &'a [Option<Value>]) -> Self {
        Args { values, run }
    }

    /// The run this call is part of.
    fn run(&self) -> &'a RunContext {
        self.run
    }
}

impl Deref for Args<'_> {
    type Target = [Option<Value>];

    fn deref(&self) -> &[Option<Value>] {
        self.values
    }
}

/// One entry of the function table: how to call it, and what it reads
/// besides its arguments.
struct Entry {
    call: Function,
    /// It reads the run's instant (`GetCurrent*`): its value moves with the
    /// clock, so a query result holding it cannot be kept between pages and
    /// a computed property (a function of the item alone) refuses it.
    reads_clock: bool,
}

/// Every family's functions, by upper-case name.
fn registry() -> &'static HashMap<&'static str, Entry> {
    static REGISTRY: OnceLock<HashMap<&'static str, Entry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let families: [(&[(&str, Function)], bool); 12] = [
            (array::FUNCTIONS, false),
            (conditional::FUNCTIONS, false),
            (conversion::FUNCTIONS, false),
            (datetime::CLOCK, true),
            (datetime::FUNCTIONS, false),
            (integer::FUNCTIONS, false),
            (math::FUNCTIONS, false),
            (object::FUNCTIONS, false),
            (regex::FUNCTIONS, false),
            (spatial::FUNCTIONS, false),
            (string::FUNCTIONS, false),
            (type_check::FUNCTIONS, false),
        ];
        let mut map: HashMap<&'static str, Entry> = families
            .into_iter()
            .flat_map(|(table, reads_clock)| {
                table
                    .iter()
                    .map(move |&(name, call)| (name, Entry { call, reads_clock }))
            })
            .collect();
        // `undefined` as a literal, and an aggregate over nothing.
        let undefined = Entry {
            call: |_| None,
            reads_clock: false,
        };
        map.insert("UNDEFINED", undefined);
        map
    })
}

/// Whether `name` (upper case) is a scalar function this engine evaluates.
pub fn is_known(name: &str) -> bool {
    registry().contains_key(name)
}

/// Whether the function `name` (upper case) reads the clock: the one
/// place that says so, for the result cache and computed properties.
pub fn reads_clock(name: &str) -> bool {
    registry().get(name).is_some_and(|entry| entry.reads_clock)
}

/// The known names, sorted, for the message that refuses an unknown one.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = registry().keys().copied().collect();
    names.sort_unstable();
    names
}

/// Calls the function `name` (upper case); `undefined` for an unknown name
/// (refused earlier, when the query was prepared).
pub fn call(run: &RunContext, name: &str, args: &[Option<Value>]) -> Option<Value> {
    registry()
        .get(name)
        .and_then(|entry| (entry.call)(&Args::new(run, args)))
}

// Argument readers shared by the families: each is `undefined` (None) when
// the argument is missing or of another type.

fn arg(args: &[Option<Value>], i: usize) -> Option<&Value> {
    args.get(i)?.as_ref()
}

fn string(args: &[Option<Value>], i: usize) -> Option<&str> {
    arg(args, i)?.as_str()
}

/// A number argument, a computed NaN or infinity included.
fn num(args: &[Option<Value>], i: usize) -> Option<f64> {
    super::number::read(arg(args, i)?)
}

fn array(args: &[Option<Value>], i: usize) -> Option<&Vec<Value>> {
    arg(args, i)?.as_array()
}

/// An optional boolean flag (ignore case, partial match): absent is false;
/// present but not a boolean makes the call undefined.
fn flag(args: &[Option<Value>], i: usize) -> Option<bool> {
    match args.get(i) {
        None => Some(false),
        Some(v) => v.as_ref()?.as_bool(),
    }
}

/// Charges `bytes` a function creates to the row's budget (`None` past it).
fn charge(run: &RunContext, bytes: usize) -> Option<()> {
    run.budget.charge_bytes(bytes).then_some(())
}

/// Charges a new copy of `copied` and `extra` bytes besides.
fn budget_ok(run: &RunContext, copied: &Value, extra: usize) -> Option<()> {
    (run.budget.charge(copied) && run.budget.charge_bytes(extra)).then_some(())
}

/// A number as an index or a count: truncated toward zero, saturating at
/// the bounds of `i64` (float-to-integer casts saturate in Rust).
fn integer_part(n: f64) -> i64 {
    n.trunc() as i64
}

/// A number result: integral values as integers; NaN and the infinities
/// as the engine's marker (`SQRT(-1)` is NaN, which `IS_FINITE_NUMBER`
/// tells; a query that returns one is refused, see `number.rs`).
fn finite(n: f64) -> Option<Value> {
    Some(super::number::to_value(n))
}

#[cfg(test)]
pub(crate) mod testing {
    //! The table tests' shorthand: arguments as a JSON array where the
    //! string `"$undefined"` stands for an undefined argument.
    use serde_json::Value;

    pub const U: &str = "$undefined";

    pub fn run(name: &str, args: Value) -> Option<Value> {
        run_in(&crate::data::query::RunContext::outside_a_run(), name, args)
    }

    /// [`run`] in the run `cx` (its instant, its budget).
    pub fn run_in(cx: &crate::data::query::RunContext, name: &str, args: Value) -> Option<Value> {
        let args: Vec<Option<Value>> = match args {
            Value::Array(items) => items
                .into_iter()
                .map(|v| (v != Value::String(U.into())).then_some(v))
                .collect(),
            other => panic!("arguments must be an array, got {other}"),
        };
        super::call(cx, name, &args)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{run, U};
    use super::*;
    use serde_json::json;

    #[test]
    fn registry_knows_every_family_and_undefined() {
        for name in [
            "CONCAT",
            "ABS",
            "INTADD",
            "ARRAY_SLICE",
            "IS_INTEGER",
            "IIF",
        ] {
            assert!(is_known(name), "{name}");
        }
        for name in [
            "OBJECTTOARRAY",
            "REGEXMATCH",
            "STRINGTOARRAY",
            "UNDEFINED",
            "DATETIMEADD",
            "ST_DISTANCE",
        ] {
            assert!(is_known(name), "{name}");
        }
        assert!(!is_known("NOSUCH"));
        assert!(!is_known("concat"), "names arrive upper-cased");
        assert_eq!(run("UNDEFINED", json!([])), None);
        assert_eq!(run("NOSUCH", json!([1, U])), None);
        let names = names();
        assert!(
            names.windows(2).all(|w| w[0] < w[1]),
            "sorted, no duplicates"
        );
    }

    /// Every function whose value moves with the clock is marked, and only
    /// those: each is called with no arguments, then with one of each
    /// kind, at two instants a day and a millisecond apart.
    #[test]
    fn the_table_marks_every_function_that_reads_the_clock() {
        use crate::data::query::{context::Setting, RunContext};
        let at = |millis| {
            RunContext::new(
                millis,
                Setting::default(),
                crate::data::query::execute::subquery,
            )
        };
        let (early, late) = (at(1_700_000_000_000), at(1_700_086_400_001));
        let arguments = [
            json!([]),
            json!([1]),
            json!(["2024-01-01T00:00:00.0000000Z"]),
            json!([[1, 2]]),
            json!([{"a": 1}]),
            json!([true]),
        ];
        let mut moved = Vec::new();
        for name in names() {
            let moves = arguments.iter().any(|args| {
                let run = |cx| super::testing::run_in(cx, name, args.clone());
                run(&early) != run(&late)
            });
            if moves {
                moved.push(name);
            }
        }
        let marked: Vec<&str> = names().into_iter().filter(|n| reads_clock(n)).collect();
        assert_eq!(
            marked, moved,
            "the clock's functions, as the table marks them"
        );
        for name in [
            "GETCURRENTDATETIME",
            "GETCURRENTTIMESTAMP",
            "GETCURRENTTICKS",
            "GETCURRENTDATETIMESTATIC",
            "GETCURRENTTIMESTAMPSTATIC",
            "GETCURRENTTICKSSTATIC",
        ] {
            assert!(reads_clock(name), "{name}");
        }
    }
}
