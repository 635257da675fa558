//! The date and time family's tables: each documented example is a row
//! (the page above its rows), then edge rows. The pages' examples come
//! from Azure-Samples/cosmos-db-nosql-query-samples (`scripts/<name>/`),
//! whose results are checked against the service.

use super::super::testing::{run, run_in, U};
use crate::data::query::{RunContext, Setting};

/// Calls `f` with a `run` that calls functions in a query running at
/// `now_millis` (epoch milliseconds).
fn at(now_millis: i64, f: impl FnOnce(&dyn Fn(&str, Value) -> Option<Value>)) {
    let cx = RunContext::new(
        now_millis,
        Setting::default(),
        crate::data::query::execute::subquery,
    );
    f(&|name, args| run_in(&cx, name, args))
}
use rstest::rstest;
use serde_json::{json, Value};

const JULY_3: &str = "2020-07-03T00:00:00.0000000";

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimeadd
#[case(json!(["yyyy", 1, JULY_3]), Some("2021-07-03T00:00:00.0000000Z"))]
#[case(json!(["mm", 1, JULY_3]), Some("2020-08-03T00:00:00.0000000Z"))]
#[case(json!(["dd", 1, JULY_3]), Some("2020-07-04T00:00:00.0000000Z"))]
#[case(json!(["hh", 1, JULY_3]), Some("2020-07-03T01:00:00.0000000Z"))]
#[case(json!(["yyyy", -1, JULY_3]), Some("2019-07-03T00:00:00.0000000Z"))]
#[case(json!(["mm", -1, JULY_3]), Some("2020-06-03T00:00:00.0000000Z"))]
#[case(json!(["dd", -1, JULY_3]), Some("2020-07-02T00:00:00.0000000Z"))]
#[case(json!(["hh", -1, JULY_3]), Some("2020-07-02T23:00:00.0000000Z"))]
#[case(json!(["ss", 5 * -5, JULY_3]), Some("2020-07-02T23:59:35.0000000Z"))]
// Edge rows: every name of every part, month ends and leap days, parts
// finer than a tick, the range of years, invalid arguments.
#[case(json!(["year", 1, JULY_3]), Some("2021-07-03T00:00:00.0000000Z"))]
#[case(json!(["yy", 1, JULY_3]), Some("2021-07-03T00:00:00.0000000Z"))]
#[case(json!(["month", 1, JULY_3]), Some("2020-08-03T00:00:00.0000000Z"))]
#[case(json!(["m", 13, JULY_3]), Some("2021-08-03T00:00:00.0000000Z"))]
#[case(json!(["day", 1, JULY_3]), Some("2020-07-04T00:00:00.0000000Z"))]
#[case(json!(["d", 366, JULY_3]), Some("2021-07-04T00:00:00.0000000Z"))]
#[case(json!(["hour", 24, JULY_3]), Some("2020-07-04T00:00:00.0000000Z"))]
#[case(json!(["minute", 1, JULY_3]), Some("2020-07-03T00:01:00.0000000Z"))]
#[case(json!(["mi", -1, JULY_3]), Some("2020-07-02T23:59:00.0000000Z"))]
#[case(json!(["n", 90, JULY_3]), Some("2020-07-03T01:30:00.0000000Z"))]
#[case(json!(["second", 1, JULY_3]), Some("2020-07-03T00:00:01.0000000Z"))]
#[case(json!(["s", 1, JULY_3]), Some("2020-07-03T00:00:01.0000000Z"))]
#[case(json!(["millisecond", 1, JULY_3]), Some("2020-07-03T00:00:00.0010000Z"))]
#[case(json!(["ms", -1, JULY_3]), Some("2020-07-02T23:59:59.9990000Z"))]
#[case(json!(["microsecond", 1, JULY_3]), Some("2020-07-03T00:00:00.0000010Z"))]
#[case(json!(["mcs", 15, JULY_3]), Some("2020-07-03T00:00:00.0000150Z"))]
#[case(json!(["nanosecond", 100, JULY_3]), Some("2020-07-03T00:00:00.0000001Z"))]
#[case(json!(["ns", 199, JULY_3]), Some("2020-07-03T00:00:00.0000001Z"))]
#[case(json!(["ns", 99, JULY_3]), Some("2020-07-03T00:00:00.0000000Z"))]
#[case(json!(["YYYY", 1, JULY_3]), Some("2021-07-03T00:00:00.0000000Z"))]
#[case(json!(["mm", 1, "2020-01-31T10:20:30.1234567Z"]), Some("2020-02-29T10:20:30.1234567Z"))]
#[case(json!(["mm", 1, "2021-01-31"]), Some("2021-02-28T00:00:00.0000000Z"))]
#[case(json!(["mm", -1, "2020-03-31"]), Some("2020-02-29T00:00:00.0000000Z"))]
#[case(json!(["yyyy", 1, "2020-02-29"]), Some("2021-02-28T00:00:00.0000000Z"))]
#[case(json!(["yyyy", 4, "2020-02-29"]), Some("2024-02-29T00:00:00.0000000Z"))]
#[case(json!(["dd", 1, "2020-02-28"]), Some("2020-02-29T00:00:00.0000000Z"))]
#[case(json!(["dd", 1.0, JULY_3]), Some("2020-07-04T00:00:00.0000000Z"))]
#[case(json!(["yyyy", 7979, "2020-12-31T23:59:59.9999999Z"]), Some("9999-12-31T23:59:59.9999999Z"))]
#[case(json!(["yyyy", 7980, JULY_3]), None)]
#[case(json!(["ns", 100, "9999-12-31T23:59:59.9999999Z"]), None)]
#[case(json!(["dd", -1, "0001-01-01"]), None)]
#[case(json!(["mm", -1, "0001-01-31"]), None)]
#[case(json!(["ms", i64::MAX, JULY_3]), None)]
#[case(json!(["yyyy", i64::MAX, JULY_3]), None)]
#[case(json!(["mm", i64::MIN, JULY_3]), None)]
#[case(json!(["dd", 1e300, JULY_3]), None)]
#[case(json!(["dd", 1.5, JULY_3]), None)]
#[case(json!(["dd", "1", JULY_3]), None)]
#[case(json!(["week", 1, JULY_3]), None)]
#[case(json!(["", 1, JULY_3]), None)]
#[case(json!([1, 1, JULY_3]), None)]
#[case(json!(["dd", 1, "2020-07-32"]), None)]
#[case(json!(["dd", 1, 20200703]), None)]
#[case(json!(["dd", U, JULY_3]), None)]
#[case(json!(["dd", 1]), None)]
#[case(json!(["dd", 1, JULY_3, 1]), None)]
fn date_time_add(#[case] args: Value, #[case] expected: Option<&str>) {
    assert_eq!(run("DATETIMEADD", args), expected.map(Value::from));
}

const JAN_8: &str = "2021-01-08T18:35:00.0000000";

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimebin
#[case(json!([JAN_8, "dd"]), Some("2021-01-08T00:00:00.0000000Z"))]
#[case(json!([JAN_8, "hh"]), Some("2021-01-08T18:00:00.0000000Z"))]
#[case(json!([JAN_8, "ss"]), Some("2021-01-08T18:35:00.0000000Z"))]
#[case(json!([JAN_8, "hh", 5]), Some("2021-01-08T15:00:00.0000000Z"))]
#[case(json!([JAN_8, "dd", 7]), Some("2021-01-07T00:00:00.0000000Z"))]
#[case(json!([JAN_8, "dd", 7, "1601-01-01T00:00:00.0000000"]), Some("2021-01-04T00:00:00.0000000Z"))]
// Edge rows: the documented parts only (days to nanoseconds), bins before
// the origin, bins narrower than a tick, and the documented refusals.
#[case(json!([JAN_8, "day"]), Some("2021-01-08T00:00:00.0000000Z"))]
#[case(json!([JAN_8, "n", 15]), Some("2021-01-08T18:30:00.0000000Z"))]
#[case(json!([JAN_8, "minute", 60, "2021-01-08T00:10:00Z"]), Some("2021-01-08T18:10:00.0000000Z"))]
#[case(json!(["2021-01-08T18:35:07.1234567Z", "s", 5]), Some("2021-01-08T18:35:05.0000000Z"))]
#[case(json!(["2021-01-08T18:35:07.1234567Z", "ms"]), Some("2021-01-08T18:35:07.1230000Z"))]
#[case(json!(["2021-01-08T18:35:07.1234567Z", "ms", 250]), Some("2021-01-08T18:35:07.0000000Z"))]
#[case(json!(["2021-01-08T18:35:07.1234567Z", "mcs"]), Some("2021-01-08T18:35:07.1234560Z"))]
#[case(json!(["2021-01-08T18:35:07.1234567Z", "ns"]), Some("2021-01-08T18:35:07.1234567Z"))]
#[case(json!(["2021-01-08T18:35:07.1234567Z", "ns", 1000]), Some("2021-01-08T18:35:07.1234560Z"))]
#[case(json!(["1969-12-31T23:00:00Z", "dd"]), Some("1969-12-31T00:00:00.0000000Z"))]
#[case(json!(["1969-12-31T23:00:00Z", "hh", 5]), Some("1969-12-31T19:00:00.0000000Z"))]
#[case(json!(["1601-01-01T00:00:00Z", "dd", 7, "1601-01-01"]), Some("1601-01-01T00:00:00.0000000Z"))]
#[case(json!(["0001-01-01T00:00:00Z", "dd", 7]), None)]
#[case(json!([JAN_8, "dd", 7, "1600-12-31T23:59:59.9999999Z"]), None)]
#[case(json!([JAN_8, "dd", 1, "0001-01-01"]), None)]
#[case(json!([JAN_8, "mm"]), None)]
#[case(json!([JAN_8, "yyyy"]), None)]
#[case(json!([JAN_8, "dd", 0]), None)]
#[case(json!([JAN_8, "dd", -7]), None)]
#[case(json!([JAN_8, "dd", 1.5]), None)]
#[case(json!([JAN_8, "dd", U]), None)]
#[case(json!([JAN_8, "dd", 1, U]), None)]
#[case(json!([JAN_8, "dd", 1, "yesterday"]), None)]
#[case(json!([JAN_8, "dd", i64::MAX]), Some("1970-01-01T00:00:00.0000000Z"))]
#[case(json!(["dd", JAN_8]), None)]
#[case(json!(["2021-02-29", "dd"]), None)]
#[case(json!([JAN_8]), None)]
#[case(json!([JAN_8, "dd", 1, JAN_8, 1]), None)]
fn date_time_bin(#[case] args: Value, #[case] expected: Option<&str>) {
    assert_eq!(run("DATETIMEBIN", args), expected.map(Value::from));
}

const FEB_4: &str = "2019-02-04T16:00:00.0000000";
const MAR_5: &str = "2018-03-05T05:00:00.0000000";

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimediff: "diffDays"
// is no part, so the example's days are undefined.
#[case(json!(["yyyy", FEB_4, MAR_5]), Some(json!(-1)))]
#[case(json!(["mm", FEB_4, MAR_5]), Some(json!(-11)))]
#[case(json!(["diffDays", FEB_4, MAR_5]), None)]
#[case(json!(["hh", FEB_4, MAR_5]), Some(json!(-8075)))]
#[case(json!(["ss", FEB_4, MAR_5]), Some(json!(-29070000)))]
#[case(json!(["yyyy", MAR_5, FEB_4]), Some(json!(1)))]
#[case(json!(["mm", MAR_5, FEB_4]), Some(json!(11)))]
#[case(json!(["diffDays", MAR_5, FEB_4]), None)]
#[case(json!(["hh", MAR_5, FEB_4]), Some(json!(8075)))]
#[case(json!(["ss", MAR_5, FEB_4]), Some(json!(29070000)))]
// The page's earlier examples: boundaries crossed, not intervals.
#[case(json!(["day", "2020-01-01T01:02:03.1234527Z", "2020-01-03T01:02:03.1234567Z"]), Some(json!(2)))]
#[case(json!(["yyyy", "2028-01-01T01:02:03.1234527Z", "2020-01-03T01:02:03.1234567Z"]), Some(json!(-8)))]
#[case(json!(["hh", "2020-01-01T01:00:00.1234527Z", "2020-01-01T01:59:59.1234567Z"]), Some(json!(0)))]
// Edge rows.
#[case(json!(["dd", FEB_4, MAR_5]), Some(json!(-336)))]
#[case(json!(["dd", "2020-01-01T23:59:59Z", "2020-01-02T00:00:01Z"]), Some(json!(1)))]
#[case(json!(["yyyy", "2020-12-31T23:59:59.9999999Z", "2021-01-01"]), Some(json!(1)))]
#[case(json!(["mm", "2020-01-31", "2020-02-01"]), Some(json!(1)))]
#[case(json!(["mi", "2020-01-01T00:00:59Z", "2020-01-01T00:01:00Z"]), Some(json!(1)))]
#[case(json!(["ms", "2020-01-01T00:00:00.0009999", "2020-01-01T00:00:00.0010000"]), Some(json!(1)))]
#[case(json!(["mcs", "2020-01-01T00:00:00.0000019", "2020-01-01T00:00:00.0000020"]), Some(json!(1)))]
#[case(json!(["ns", "2020-01-01T00:00:00.0000001", "2020-01-01"]), Some(json!(-100)))]
#[case(json!(["ss", JAN_8, JAN_8]), Some(json!(0)))]
#[case(json!(["ns", "0001-01-01", "9999-12-31T23:59:59.9999999"]), Some(json!(3.155_378_976e20)))]
#[case(json!(["dd", "0001-01-01", "9999-12-31"]), Some(json!(3_652_058)))]
#[case(json!(["week", FEB_4, MAR_5]), None)]
#[case(json!(["dd", FEB_4, "2018-03-05T25:00:00"]), None)]
#[case(json!(["dd", 1, FEB_4]), None)]
#[case(json!(["dd", FEB_4]), None)]
#[case(json!(["dd", FEB_4, MAR_5, MAR_5]), None)]
fn date_time_diff(#[case] args: Value, #[case] expected: Option<Value>) {
    assert_eq!(run("DATETIMEDIFF", args), expected);
}

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimefromparts
#[case(json!([2017, 4, 20]), Some("2017-04-20T00:00:00.0000000Z"))]
#[case(json!([2017, 4, 20, 0, 0, 0, 0]), Some("2017-04-20T00:00:00.0000000Z"))]
#[case(json!([2017, 4, 20, 13, 15, 20, 3456789]), Some("2017-04-20T13:15:20.3456789Z"))]
#[case(json!([2017, 4, 20, 13, 15]), Some("2017-04-20T13:15:00.0000000Z"))]
#[case(json!([-2000, -1, -1]), None)]
// Edge rows: the bounds of every part.
#[case(json!([2017, 4, 20, 13]), Some("2017-04-20T13:00:00.0000000Z"))]
#[case(json!([2017, 4, 20, 13, 15, 20]), Some("2017-04-20T13:15:20.0000000Z"))]
#[case(json!([1, 1, 1]), Some("0001-01-01T00:00:00.0000000Z"))]
#[case(json!([9999, 12, 31, 23, 59, 59, 9999999]), Some("9999-12-31T23:59:59.9999999Z"))]
#[case(json!([2020, 2, 29]), Some("2020-02-29T00:00:00.0000000Z"))]
#[case(json!([2017.0, 4.0, 20.0]), Some("2017-04-20T00:00:00.0000000Z"))]
#[case(json!([2019, 2, 29]), None)]
#[case(json!([2017, 4, 31]), None)]
#[case(json!([2017, 13, 1]), None)]
#[case(json!([2017, 0, 1]), None)]
#[case(json!([2017, 4, 0]), None)]
#[case(json!([0, 1, 1]), None)]
#[case(json!([10000, 1, 1]), None)]
#[case(json!([2017, 4, 20, 24]), None)]
#[case(json!([2017, 4, 20, 0, 60]), None)]
#[case(json!([2017, 4, 20, 0, 0, 60]), None)]
#[case(json!([2017, 4, 20, 0, 0, 0, 10000000]), None)]
#[case(json!([2017, 4, 20, -1]), None)]
#[case(json!([2017.5, 4, 20]), None)]
#[case(json!([2017, 4, 20, 1e300]), None)]
#[case(json!(["2017", 4, 20]), None)]
#[case(json!([2017, 4, U]), None)]
#[case(json!([2017, 4]), None)]
#[case(json!([2017, 4, 20, 0, 0, 0, 0, 0]), None)]
fn date_time_from_parts(#[case] args: Value, #[case] expected: Option<&str>) {
    assert_eq!(run("DATETIMEFROMPARTS", args), expected.map(Value::from));
}

const MAY_29: &str = "2016-05-29T08:30:00.1301617";

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimepart: the part
// comes first, as in the example (an older page's syntax swapped them).
#[case(json!(["yyyy", MAY_29]), Some(2016))]
#[case(json!(["mm", MAY_29]), Some(5))]
#[case(json!(["dd", MAY_29]), Some(29))]
#[case(json!(["hh", MAY_29]), Some(8))]
#[case(json!(["mi", MAY_29]), Some(30))]
#[case(json!(["ss", MAY_29]), Some(0))]
#[case(json!(["ms", MAY_29]), Some(130))]
#[case(json!(["mcs", MAY_29]), Some(130161))]
#[case(json!(["ns", MAY_29]), Some(130161700))]
// Edge rows.
#[case(json!(["year", "9999-12-31T23:59:59.9999999Z"]), Some(9999))]
#[case(json!(["m", MAY_29]), Some(5))]
#[case(json!(["d", MAY_29]), Some(29))]
#[case(json!(["hour", "2016-05-29T23:59:58Z"]), Some(23))]
#[case(json!(["n", "2016-05-29T23:59:58Z"]), Some(59))]
#[case(json!(["s", "2016-05-29T23:59:58Z"]), Some(58))]
#[case(json!(["second", "2016-05-29"]), Some(0))]
#[case(json!(["Month", MAY_29]), Some(5))]
#[case(json!([MAY_29, "yyyy"]), None)]
#[case(json!(["week", MAY_29]), None)]
#[case(json!(["yyyy", "2016-05-29T08:30:00.1301617+02:00"]), None)]
#[case(json!(["yyyy", 2016]), None)]
#[case(json!(["yyyy"]), None)]
fn date_time_part(#[case] args: Value, #[case] expected: Option<i64>) {
    assert_eq!(run("DATETIMEPART", args), expected.map(Value::from));
}

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimetoticks (ticks
// count from the Unix epoch)
#[case("DATETIMETOTICKS", json!(["2015-05-19T12:00:00.0000000"]), Some(14_320_368_000_000_000))]
// https://learn.microsoft.com/en-us/cosmos-db/query/datetimetotimestamp,
// with the examples of the page's earlier version.
#[case("DATETIMETOTIMESTAMP", json!(["2015-05-19T12:00:00.0000000"]), Some(1_432_036_800_000))]
#[case("DATETIMETOTIMESTAMP", json!(["2020-07-09T23:20:13.4575530Z"]), Some(1_594_336_813_457))]
#[case("DATETIMETOTIMESTAMP", json!(["2020-07-09"]), Some(1_594_252_800_000))]
// Edge rows: the extremes, instants before the epoch (the millisecond
// holding them), invalid arguments.
#[case("DATETIMETOTICKS", json!(["1970-01-01T00:00:00.0000001Z"]), Some(1))]
#[case("DATETIMETOTICKS", json!(["1601-01-01"]), Some(-116_444_736_000_000_000))]
#[case("DATETIMETOTICKS", json!(["0001-01-01"]), Some(-621_355_968_000_000_000))]
#[case("DATETIMETOTICKS", json!(["9999-12-31T23:59:59.9999999Z"]), Some(2_534_023_007_999_999_999))]
#[case("DATETIMETOTICKS", json!(["2015-05-19T12:00:00.0000000", 1]), None)]
#[case("DATETIMETOTICKS", json!([14_320_368_000_000_000_i64]), None)]
#[case("DATETIMETOTIMESTAMP", json!(["1969-12-31T23:59:59.9995"]), Some(-1))]
#[case("DATETIMETOTIMESTAMP", json!(["1969-12-31T23:59:59.999"]), Some(-1))]
#[case("DATETIMETOTIMESTAMP", json!(["0001-01-01"]), Some(-62_135_596_800_000))]
#[case("DATETIMETOTIMESTAMP", json!(["2020-07-09T24:00:00"]), None)]
#[case("DATETIMETOTIMESTAMP", json!([U]), None)]
#[case("DATETIMETOTIMESTAMP", json!([]), None)]
fn date_time_to_number(#[case] name: &str, #[case] args: Value, #[case] expected: Option<i64>) {
    assert_eq!(run(name, args), expected.map(Value::from));
}

#[rstest]
// https://learn.microsoft.com/en-us/cosmos-db/query/tickstodatetime
#[case("TICKSTODATETIME", json!([15973607943002652_i64]), Some("2020-08-13T23:19:54.3002652Z"))]
#[case("TICKSTODATETIME", json!([0]), Some("1970-01-01T00:00:00.0000000Z"))]
#[case("TICKSTODATETIME", json!([-116444736000000000_i64]), Some("1601-01-01T00:00:00.0000000Z"))]
// https://learn.microsoft.com/en-us/cosmos-db/query/timestamptodatetime
#[case("TIMESTAMPTODATETIME", json!([1597360794300_i64]), Some("2020-08-13T23:19:54.3000000Z"))]
#[case("TIMESTAMPTODATETIME", json!([0]), Some("1970-01-01T00:00:00.0000000Z"))]
#[case("TIMESTAMPTODATETIME", json!([-11644473600000_i64]), Some("1601-01-01T00:00:00.0000000Z"))]
// Edge rows: fractions (to the tick, toward zero), the extremes, and past them.
#[case("TICKSTODATETIME", json!([-1]), Some("1969-12-31T23:59:59.9999999Z"))]
#[case("TICKSTODATETIME", json!([1.9]), Some("1970-01-01T00:00:00.0000001Z"))]
#[case("TICKSTODATETIME", json!([-621355968000000000_i64]), Some("0001-01-01T00:00:00.0000000Z"))]
#[case("TICKSTODATETIME", json!([2534023007999999999_i64]), Some("9999-12-31T23:59:59.9999999Z"))]
#[case("TICKSTODATETIME", json!([-621355968000000001_i64]), None)]
#[case("TICKSTODATETIME", json!([2534023008000000000_i64]), None)]
#[case("TICKSTODATETIME", json!([u64::MAX]), None)]
#[case("TICKSTODATETIME", json!([i64::MIN]), None)]
#[case("TICKSTODATETIME", json!([1e300]), None)]
#[case("TICKSTODATETIME", json!(["0"]), None)]
#[case("TICKSTODATETIME", json!([0, 0]), None)]
#[case("TIMESTAMPTODATETIME", json!([1.5]), Some("1970-01-01T00:00:00.0015000Z"))]
#[case("TIMESTAMPTODATETIME", json!([-1]), Some("1969-12-31T23:59:59.9990000Z"))]
#[case("TIMESTAMPTODATETIME", json!([253402300799999_i64]), Some("9999-12-31T23:59:59.9990000Z"))]
#[case("TIMESTAMPTODATETIME", json!([253402300800000_i64]), None)]
#[case("TIMESTAMPTODATETIME", json!([i64::MAX]), None)]
#[case("TIMESTAMPTODATETIME", json!([-1e300]), None)]
#[case("TIMESTAMPTODATETIME", json!([null]), None)]
#[case("TIMESTAMPTODATETIME", json!([]), None)]
fn number_to_date_time(#[case] name: &str, #[case] args: Value, #[case] expected: Option<&str>) {
    assert_eq!(run(name, args), expected.map(Value::from));
}

/// What the functions accept as a date and time: the documented
/// `YYYY-MM-DDThh:mm:ss.fffffffZ`, and the shorter forms the documented
/// examples use (no `Z`, fewer fractional digits, a date alone).
#[rstest]
#[case("2020-07-09T23:20:13.4575530Z", Some(15_943_368_134_575_530))]
#[case("2020-07-09T23:20:13.4575530", Some(15_943_368_134_575_530))]
#[case("2020-07-09T23:20:13.457553Z", Some(15_943_368_134_575_530))]
#[case("2020-07-09T23:20:13.4Z", Some(15_943_368_134_000_000))]
#[case("2020-07-09T23:20:13Z", Some(15_943_368_130_000_000))]
#[case("2020-07-09T23:20:13", Some(15_943_368_130_000_000))]
#[case("2020-07-09T23:20Z", Some(15_943_368_000_000_000))]
#[case("2020-07-09T23:20", Some(15_943_368_000_000_000))]
#[case("2020-07-09", Some(15_942_528_000_000_000))]
#[case("2020-07-09T23:20:13.12345678Z", None)]
#[case("2020-07-09T23:20:13.Z", None)]
#[case("2020-07-09T23:20:13+00:00", None)]
#[case("2020-07-09T23:20:13ZZ", None)]
#[case("2020-07-09T23:20:13z", None)]
#[case("2020-07-09t23:20:13", None)]
#[case("2020-07-09 23:20:13", None)]
#[case("2020-07-09Z", None)]
#[case("2020-07-09T", None)]
#[case("2020-07-09T23", None)]
#[case("2020-07-09T23:2", None)]
#[case("2020-07-09T23:20:1", None)]
#[case("2020-07-09T2a:20", None)]
#[case("2020-07-09T23-20", None)]
#[case("2020-07-09T24:00:00", None)]
#[case("2020-07-09T23:60:00", None)]
#[case("2020-07-09T23:59:60", None)]
#[case("2020-7-09", None)]
#[case("20200709", None)]
#[case("+2020-07-09", None)]
#[case("0000-01-01", None)]
#[case("2020-00-01", None)]
#[case("2020-02-30", None)]
#[case("２０２０-07-09", None)]
#[case("2020-07-0９", None)]
#[case("", None)]
fn date_and_time_strings(#[case] text: &str, #[case] ticks: Option<i64>) {
    assert_eq!(
        run("DATETIMETOTICKS", json!([text])),
        ticks.map(Value::from)
    );
}

/// https://learn.microsoft.com/en-us/cosmos-db/query/getcurrentdatetime and
/// its siblings: the instant the query was given, in three forms. The
/// pages' example outputs (`1556916469065` ms) are instants like any other.
#[test]
fn current_date_time_timestamp_and_ticks_read_the_query_instant() {
    at(1_556_916_469_065, |run| {
        for (name, expected) in [
            ("GETCURRENTDATETIME", json!("2019-05-03T20:47:49.0650000Z")),
            ("GETCURRENTTIMESTAMP", json!(1_556_916_469_065_i64)),
            ("GETCURRENTTICKS", json!(15_569_164_690_650_000_i64)),
        ] {
            assert_eq!(run(name, json!([])), Some(expected.clone()), "{name}");
            let stat = format!("{name}STATIC");
            assert_eq!(run(&stat, json!([])), Some(expected), "{stat}");
            assert_eq!(run(name, json!([1])), None, "{name} takes no argument");
        }
        let now = run("GETCURRENTDATETIME", json!([])).unwrap();
        assert_eq!(
            run("DATETIMETOTIMESTAMP", json!([now.clone()])),
            run("GETCURRENTTIMESTAMP", json!([]))
        );
        assert_eq!(
            run("DATETIMETOTICKS", json!([now])),
            run("GETCURRENTTICKS", json!([]))
        );
    });
}

#[test]
fn the_instant_is_scoped_to_the_query() {
    assert_eq!(run("GETCURRENTTIMESTAMP", json!([])), None, "no query");
    at(1_000, |run| {
        at(2_000, |run| {
            assert_eq!(run("GETCURRENTTIMESTAMP", json!([])), Some(json!(2_000)));
        });
        assert_eq!(run("GETCURRENTTIMESTAMP", json!([])), Some(json!(1_000)));
    });
    assert_eq!(run("GETCURRENTTIMESTAMP", json!([])), None);
    // Before 0001 or after 9999 there is no date and time to give.
    at(i64::MAX, |run| {
        assert_eq!(run("GETCURRENTDATETIME", json!([])), None)
    });
    at(-62_135_596_800_001, |run| {
        assert_eq!(run("GETCURRENTTICKS", json!([])), None)
    });
    at(-62_135_596_800_000, |run| {
        assert_eq!(
            run("GETCURRENTDATETIME", json!([])),
            Some(json!("0001-01-01T00:00:00.0000000Z"))
        )
    });
}

/// Every function is total: any arguments (of every type, at and past the
/// bounds, up to four of them) give a value or undefined, never a panic,
/// and every date and time string given is one the functions read back.
#[test]
fn every_function_is_total_and_gives_dates_it_reads_back() {
    let pool = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(7),
        json!(1e300),
        json!(-1e300),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(""),
        json!("dd"),
        json!("ns"),
        json!("yyyy"),
        json!("mm"),
        json!("0001-01-01"),
        json!("1601-01-01"),
        json!("9999-12-31T23:59:59.9999999Z"),
        json!([]),
        json!({}),
        json!(U),
    ];
    let names: Vec<&str> = super::FUNCTIONS.iter().map(|(name, _)| *name).collect();
    let mut calls = 0;
    at(1_700_000_000_000, |run| {
        for name in &names {
            let mut args: Vec<Value> = Vec::new();
            let mut check = |args: &[Value]| {
                calls += 1;
                match run(name, json!(args)) {
                    Some(Value::String(s)) => assert!(
                        run("DATETIMETOTICKS", json!([s])).is_some(),
                        "{name}{args:?} gave {s}"
                    ),
                    Some(Value::Number(_)) | None => {}
                    Some(other) => panic!("{name}{args:?} gave {other}"),
                }
            };
            check(&args);
            for a in &pool {
                args.push(a.clone());
                check(&args);
                for b in &pool {
                    args.push(b.clone());
                    check(&args);
                    for c in &pool {
                        args.push(c.clone());
                        check(&args);
                        for d in [&pool[3], &pool[8], &pool[16], &pool[21]] {
                            args.push(d.clone());
                            check(&args);
                            args.pop();
                        }
                        args.pop();
                    }
                    args.pop();
                }
                args.pop();
            }
        }
    });
    assert!(calls > 100_000, "{calls}");
}
