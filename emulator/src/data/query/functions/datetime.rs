//! Date and time functions: `GetCurrentDateTime`, `GetCurrentTimestamp`,
//! `GetCurrentTicks` and their `...Static` variants, `DateTimeAdd`,
//! `DateTimeBin`, `DateTimeDiff`, `DateTimeFromParts`, `DateTimePart`,
//! `DateTimeToTicks`, `DateTimeToTimestamp`, `TicksToDateTime`,
//! `TimestampToDateTime`.
//!
//! Date and time strings are UTC in the service's ISO 8601 form,
//! `YYYY-MM-DDThh:mm:ss.fffffffZ`, between the years 0001 and 9999. Inside,
//! an instant is a count of 100-nanosecond ticks since 0001-01-01T00:00:00,
//! which holds every instant of that range exactly. The ticks and
//! timestamps the functions take and return count from the Unix epoch, as
//! the service's do. Calendar arithmetic (month lengths, leap years,
//! day numbers) is the `time` crate's.
//!
//! The `GetCurrent*` functions read the instant of the run they are part
//! of (its context's), taken once from the emulator's clock: every call in
//! one query returns the same instant, and a manual clock moves them all.

use serde_json::Value;
use time::{Date, Month};

use super::{arg, charge, string, Args, Function};

const TICKS_PER_MILLISECOND: i64 = 10_000;
const TICKS_PER_SECOND: i64 = 10_000_000;
const TICKS_PER_DAY: i64 = 86_400 * TICKS_PER_SECOND;
/// The Julian day number of 0001-01-01, tick zero.
const JULIAN_DAY_OF_TICK_ZERO: i32 = 1_721_426;
/// Ticks from 0001-01-01 to the Unix epoch, 1970-01-01.
const UNIX_EPOCH: i64 = 621_355_968_000_000_000;
/// Ticks from 0001-01-01 to the Windows epoch, 1601-01-01: the earliest
/// origin `DateTimeBin` accepts.
const WINDOWS_EPOCH: i64 = 504_911_232_000_000_000;
/// The last instant there is: 9999-12-31T23:59:59.9999999.
const MAX_TICKS: i64 = 3_155_378_975_999_999_999;

/// The functions that read the clock (the run's instant): the function
/// table marks them ([`super::reads_clock`]), so that a query calling one
/// keeps no result between pages and a computed property refuses it.
pub const CLOCK: &[(&str, Function)] = &[
    ("GETCURRENTDATETIME", current_date_time),
    ("GETCURRENTDATETIMESTATIC", current_date_time),
    ("GETCURRENTTIMESTAMP", current_timestamp),
    ("GETCURRENTTIMESTAMPSTATIC", current_timestamp),
    ("GETCURRENTTICKS", current_ticks),
    ("GETCURRENTTICKSSTATIC", current_ticks),
];

pub const FUNCTIONS: &[(&str, Function)] = &[
    ("DATETIMEADD", add),
    ("DATETIMEBIN", bin),
    ("DATETIMEDIFF", diff),
    ("DATETIMEFROMPARTS", from_parts),
    ("DATETIMEPART", part_of),
    ("DATETIMETOTICKS", |a| {
        (a.len() == 1).then_some(())?;
        Some(Value::from(date_time(a, 0)? - UNIX_EPOCH))
    }),
    ("DATETIMETOTIMESTAMP", |a| {
        (a.len() == 1).then_some(())?;
        let ticks = date_time(a, 0)? - UNIX_EPOCH;
        Some(Value::from(ticks.div_euclid(TICKS_PER_MILLISECOND)))
    }),
    ("TICKSTODATETIME", |a| {
        (a.len() == 1).then_some(())?;
        format(a, unix_ticks(arg(a, 0)?, 1)?.checked_add(UNIX_EPOCH)?)
    }),
    ("TIMESTAMPTODATETIME", |a| {
        (a.len() == 1).then_some(())?;
        format(
            a,
            unix_ticks(arg(a, 0)?, TICKS_PER_MILLISECOND)?.checked_add(UNIX_EPOCH)?,
        )
    }),
];

/// The run's instant in ticks since 0001-01-01; `None` outside a query.
fn now(args: &Args) -> Option<i64> {
    let millis = args.run().now_millis?;
    millis
        .checked_mul(TICKS_PER_MILLISECOND)?
        .checked_add(UNIX_EPOCH)
        .filter(|t| (0..=MAX_TICKS).contains(t))
}

fn current_date_time(args: &Args) -> Option<Value> {
    args.is_empty().then_some(())?;
    format(args, now(args)?)
}

fn current_timestamp(args: &Args) -> Option<Value> {
    args.is_empty().then_some(())?;
    Some(Value::from(
        (now(args)? - UNIX_EPOCH).div_euclid(TICKS_PER_MILLISECOND),
    ))
}

fn current_ticks(args: &Args) -> Option<Value> {
    args.is_empty().then_some(())?;
    Some(Value::from(now(args)? - UNIX_EPOCH))
}

/// A date and time part, by any of its documented names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
}

impl Part {
    /// The documented names and abbreviations, in any letter case.
    fn named(name: &str) -> Option<Part> {
        Some(match name.to_ascii_lowercase().as_str() {
            "year" | "yyyy" | "yy" => Part::Year,
            "month" | "mm" | "m" => Part::Month,
            "day" | "dd" | "d" => Part::Day,
            "hour" | "hh" => Part::Hour,
            "minute" | "mi" | "n" => Part::Minute,
            "second" | "ss" | "s" => Part::Second,
            "millisecond" | "ms" => Part::Millisecond,
            "microsecond" | "mcs" => Part::Microsecond,
            "nanosecond" | "ns" => Part::Nanosecond,
            _ => return None,
        })
    }

    /// The part's length in nanoseconds; `None` for years and months,
    /// whose lengths vary.
    fn nanoseconds(self) -> Option<i128> {
        const SECOND: i128 = 1_000_000_000;
        Some(match self {
            Part::Year | Part::Month => return None,
            Part::Day => 86_400 * SECOND,
            Part::Hour => 3_600 * SECOND,
            Part::Minute => 60 * SECOND,
            Part::Second => SECOND,
            Part::Millisecond => 1_000_000,
            Part::Microsecond => 1_000,
            Part::Nanosecond => 1,
        })
    }
}

fn part(args: &[Option<Value>], i: usize) -> Option<Part> {
    Part::named(string(args, i)?)
}

/// The argument `i` as a date and time string, in ticks since 0001-01-01.
fn date_time(args: &[Option<Value>], i: usize) -> Option<i64> {
    parse(string(args, i)?)
}

/// A whole number (`2`, `2.0`); `None` for fractions and past `i64`.
fn whole(args: &[Option<Value>], i: usize) -> Option<i64> {
    let value = arg(args, i)?;
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let n = value.as_f64()?;
    // -2^63 is i64::MIN, and 2^63 the first double past i64::MAX.
    let bound = -(i64::MIN as f64);
    (n.fract() == 0.0 && (-bound..bound).contains(&n)).then_some(n as i64)
}

/// Ticks since the Unix epoch from a number of `unit`s (1: ticks; 10,000:
/// milliseconds); a fraction of a tick is dropped, toward zero.
fn unix_ticks(value: &Value, unit: i64) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return n.checked_mul(unit);
    }
    let ticks = (value.as_f64()? * unit as f64).trunc();
    // Well inside i64 whenever it names an instant of years 0001 to 9999.
    (ticks.abs() < 1e19).then_some(ticks as i64)
}

/// Parses `YYYY-MM-DD`, optionally followed by `Thh:mm`, `:ss`, `.f` to
/// `.fffffff` and `Z`, into ticks since 0001-01-01. Anything else (another
/// offset than `Z`, an impossible date, hour 24, an eighth fractional
/// digit) is not a date and time.
fn parse(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = Month::try_from(u8::try_from(digits(&b[5..7])?).ok()?).ok()?;
    let date = Date::from_calendar_date(
        i32::try_from(year).ok()?,
        month,
        u8::try_from(digits(&b[8..10])?).ok()?,
    )
    .ok()?;
    if year == 0 {
        return None;
    }
    let mut rest = &b[10..];
    let mut time_of_day = 0;
    if let Some((b'T', after)) = rest.split_first() {
        let (hour, minute) = (digits(after.get(0..2)?)?, digits(after.get(3..5)?)?);
        if after[2] != b':' || hour > 23 || minute > 59 {
            return None;
        }
        time_of_day = i64::from(hour * 3_600 + minute * 60) * TICKS_PER_SECOND;
        rest = &after[5..];
        if let Some((b':', after)) = rest.split_first() {
            let second = digits(after.get(0..2)?)?;
            if second > 59 {
                return None;
            }
            time_of_day += i64::from(second) * TICKS_PER_SECOND;
            rest = &after[2..];
            if let Some((b'.', after)) = rest.split_first() {
                let n = after.iter().take_while(|c| c.is_ascii_digit()).count();
                if !(1..=7).contains(&n) {
                    return None;
                }
                time_of_day += i64::from(digits(&after[..n])?) * 10_i64.pow(7 - n as u32);
                rest = &after[n..];
            }
        }
        if rest == b"Z" {
            rest = &[];
        }
    }
    rest.is_empty()
        .then(|| days_since_tick_zero(date) * TICKS_PER_DAY + time_of_day)
}

/// The value of ASCII digits (at most 7 of them, so no overflow).
fn digits(text: &[u8]) -> Option<u32> {
    text.iter().try_fold(0, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

fn days_since_tick_zero(date: Date) -> i64 {
    i64::from(date.to_julian_day() - JULIAN_DAY_OF_TICK_ZERO)
}

/// The date of an instant, and the ticks since its midnight.
fn split(ticks: i64) -> Option<(Date, i64)> {
    let day = i32::try_from(ticks.div_euclid(TICKS_PER_DAY)).ok()?;
    let date = Date::from_julian_day(day.checked_add(JULIAN_DAY_OF_TICK_ZERO)?).ok()?;
    Some((date, ticks.rem_euclid(TICKS_PER_DAY)))
}

/// `YYYY-MM-DDThh:mm:ss.fffffffZ`; `None` outside the years 0001 to 9999.
fn format(args: &Args, ticks: i64) -> Option<Value> {
    if !(0..=MAX_TICKS).contains(&ticks) {
        return None;
    }
    let (date, time) = split(ticks)?;
    let seconds = time / TICKS_PER_SECOND;
    let text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z",
        date.year(),
        u8::from(date.month()),
        date.day(),
        seconds / 3_600,
        seconds / 60 % 60,
        seconds % 60,
        time % TICKS_PER_SECOND
    );
    charge(args.run(), text.len())?;
    Some(Value::String(text))
}

/// An integer result: exact within `i64`, else the nearest double.
fn integer(n: i128) -> Option<Value> {
    match i64::try_from(n) {
        Ok(n) => Some(Value::from(n)),
        Err(_) => super::finite(n as f64),
    }
}

/// `ticks` moved by `months` calendar months, the day of the month kept
/// but for the last days of longer months (January 31 + 1 month is
/// February's last day), the time of day kept.
fn add_months(ticks: i64, months: i64) -> Option<i64> {
    let (date, time) = split(ticks)?;
    let month = i128::from(date.year()) * 12 + i128::from(u8::from(date.month()) - 1);
    let month = month.checked_add(i128::from(months))?;
    let year = i32::try_from(month.div_euclid(12)).ok()?;
    if !(1..=9999).contains(&year) {
        return None;
    }
    let month = Month::try_from(month.rem_euclid(12) as u8 + 1).ok()?;
    let day = date.day().min(month.length(year));
    let date = Date::from_calendar_date(year, month, day).ok()?;
    Some(days_since_tick_zero(date) * TICKS_PER_DAY + time)
}

/// `DateTimeAdd(part, number, date_time)`: the number must be whole.
fn add(args: &Args) -> Option<Value> {
    (args.len() == 3).then_some(())?;
    let (part, n, ticks) = (part(args, 0)?, whole(args, 1)?, date_time(args, 2)?);
    let moved = match part {
        Part::Year => add_months(ticks, n.checked_mul(12)?)?,
        Part::Month => add_months(ticks, n)?,
        // Nanoseconds finer than a tick are dropped, toward zero.
        _ => {
            let delta = i128::from(n) * part.nanoseconds()? / 100;
            i64::try_from(i128::from(ticks) + delta).ok()?
        }
    };
    format(args, moved)
}

/// `DateTimeDiff(part, start, end)`: how many boundaries of `part` lie
/// between the two instants (not how many whole parts fit between them):
/// 23:59 to 00:01 crosses one day.
fn diff(args: &Args) -> Option<Value> {
    (args.len() == 3).then_some(())?;
    let (part, start, end) = (part(args, 0)?, date_time(args, 1)?, date_time(args, 2)?);
    let months = |ticks: i64| -> Option<i128> {
        let (date, _) = split(ticks)?;
        Some(i128::from(date.year()) * 12 + i128::from(u8::from(date.month())))
    };
    let n = match part {
        Part::Year => {
            let year = |t: i64| split(t).map(|(d, _)| i128::from(d.year()));
            year(end)? - year(start)?
        }
        Part::Month => months(end)? - months(start)?,
        Part::Nanosecond => (i128::from(end) - i128::from(start)) * 100,
        _ => {
            // Instants are whole ticks and days, hours... are whole ticks
            // long: a boundary is a multiple of the part's ticks.
            let unit = part.nanoseconds()? / 100;
            i128::from(end).div_euclid(unit) - i128::from(start).div_euclid(unit)
        }
    };
    integer(n)
}

/// `DateTimeBin(date_time, part [, size [, origin]])`: the start of the
/// bin holding `date_time` when time is cut, from `origin` (the Unix epoch
/// unless given, and not before 1601), into bins of `size` (a positive
/// whole number, 1 unless given) days, hours... down to nanoseconds.
fn bin(args: &Args) -> Option<Value> {
    (2..=4).contains(&args.len()).then_some(())?;
    let ticks = date_time(args, 0)?;
    let unit = part(args, 1)?.nanoseconds()?;
    let size = if args.len() > 2 { whole(args, 2)? } else { 1 };
    let origin = if args.len() > 3 {
        date_time(args, 3)?
    } else {
        UNIX_EPOCH
    };
    if size <= 0 || origin < WINDOWS_EPOCH {
        return None;
    }
    let width = i128::from(size).checked_mul(unit)?;
    let (at, origin) = (i128::from(ticks) * 100, i128::from(origin) * 100);
    let start = origin + (at - origin).div_euclid(width) * width;
    // A bin narrower than a tick can start between ticks: its tick.
    format(args, i64::try_from(start.div_euclid(100)).ok()?)
}

/// `DateTimeFromParts(year, month, day [, hour [, minute [, second
/// [, fraction]]]])`, every part a whole number in its range; the fraction
/// counts ticks (0 to 9,999,999).
fn from_parts(args: &Args) -> Option<Value> {
    (3..=7).contains(&args.len()).then_some(())?;
    let parts = (0..args.len())
        .map(|i| whole(args, i))
        .collect::<Option<Vec<i64>>>()?;
    let field = |i: usize, max: i64| -> Option<i64> {
        let n = parts.get(i).copied().unwrap_or(0);
        (0..=max).contains(&n).then_some(n)
    };
    let (hour, minute, second, fraction) = (
        field(3, 23)?,
        field(4, 59)?,
        field(5, 59)?,
        field(6, 9_999_999)?,
    );
    let year = i32::try_from(field(0, 9999)?).ok()?;
    if year == 0 {
        return None;
    }
    let month = Month::try_from(u8::try_from(parts[1]).ok()?).ok()?;
    let date = Date::from_calendar_date(year, month, u8::try_from(parts[2]).ok()?).ok()?;
    let time = (hour * 3_600 + minute * 60 + second) * TICKS_PER_SECOND + fraction;
    format(args, days_since_tick_zero(date) * TICKS_PER_DAY + time)
}

/// `DateTimePart(part, date_time)`: the year, month... of an instant.
/// Milli-, micro- and nanoseconds are its fraction of a second in that
/// unit (`.1301617` is 130 ms, 130161 µs, 130161700 ns).
fn part_of(args: &Args) -> Option<Value> {
    (args.len() == 2).then_some(())?;
    let (part, ticks) = (part(args, 0)?, date_time(args, 1)?);
    let (date, time) = split(ticks)?;
    let (seconds, fraction) = (time / TICKS_PER_SECOND, time % TICKS_PER_SECOND);
    Some(Value::from(match part {
        Part::Year => i64::from(date.year()),
        Part::Month => i64::from(u8::from(date.month())),
        Part::Day => i64::from(date.day()),
        Part::Hour => seconds / 3_600,
        Part::Minute => seconds / 60 % 60,
        Part::Second => seconds % 60,
        Part::Millisecond => fraction / TICKS_PER_MILLISECOND,
        Part::Microsecond => fraction / 10,
        Part::Nanosecond => fraction * 100,
    }))
}

#[cfg(test)]
mod tests;
