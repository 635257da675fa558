//! Time strategies: move the target's test clock (exact), or wait on the wall
//! clock with the fixtures' seconds scaled down (approximate, so some
//! checkpoints cannot be observed and their cases are skipped, never guessed:
//! `unobservable.rs` finds them).

use crate::client::{excerpt, Client, Request};
use reqwest::Method;
use serde_json::{json, Map, Value};
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// The largest TTL value; it and anything larger are never scaled.
pub const MAX_TTL: u64 = 2_147_483_647;

/// How `_ts` being whole seconds blurs an expiry instant on the wall clock.
const WHOLE_SECOND: f64 = 1.0;
/// Margin for request latency and scheduling on top of the whole second.
const GUARD: f64 = 0.5;

/// What the user asked for with `--clock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClockChoice {
    /// The target's test clock when `GET /_emulator/clock` answers, else the wall clock.
    Auto,
    /// The target's test clock, or fail.
    Manual,
    /// The wall clock, even when the target has a test clock.
    Wall,
}

/// How a run lets time pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeMode {
    /// `POST /_emulator/clock {"advance": n}`: exact seconds, no waiting.
    Manual,
    Wall(WallClock),
}

impl TimeMode {
    pub fn describe(&self) -> String {
        match self {
            TimeMode::Manual => "manual (the target's test clock)".to_string(),
            TimeMode::Wall(wall) => format!(
                "wall (time scale {}, tolerance {:.1} s)",
                wall.scale,
                wall.tolerance()
            ),
        }
    }
}

/// Picks the time mode for a target.
pub async fn detect(client: &Client, choice: ClockChoice, scale: f64) -> Result<TimeMode, String> {
    let wall = || WallClock::new(scale).map(TimeMode::Wall);
    match choice {
        ClockChoice::Wall => wall(),
        ClockChoice::Manual => match target_now(client).await? {
            Some(_) => Ok(TimeMode::Manual),
            None => Err(format!(
                "--clock manual: {} has no test clock (GET /_emulator/clock did not answer 200)",
                client.endpoint()
            )),
        },
        ClockChoice::Auto => match target_now(client).await? {
            Some(_) => Ok(TimeMode::Manual),
            None => wall(),
        },
    }
}

/// The target's test clock, `None` when it has none (any answer but 200).
pub async fn target_now(client: &Client) -> Result<Option<i64>, String> {
    let request = Request::new(
        Method::GET,
        "_emulator/clock".to_string(),
        "",
        String::new(),
    );
    let response = client.send(request).await.map_err(|e| e.to_string())?;
    if response.status != 200 {
        return Ok(None);
    }
    parse_now(&response.body).map(Some)
}

/// Moves the target's test clock forward.
pub async fn advance(client: &Client, seconds: u64) -> Result<i64, String> {
    let request = Request::new(
        Method::POST,
        "_emulator/clock".to_string(),
        "",
        String::new(),
    )
    .json(&json!({ "advance": seconds }));
    let response = client.send(request).await.map_err(|e| e.to_string())?;
    if response.status != 200 {
        return Err(format!(
            "POST /_emulator/clock {{\"advance\": {seconds}}} answered {}: {}",
            response.status,
            excerpt(&response.body)
        ));
    }
    parse_now(&response.body)
}

fn parse_now(body: &str) -> Result<i64, String> {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("now").and_then(Value::as_i64))
        .ok_or_else(|| {
            format!(
                "/_emulator/clock answered 200 without {{\"now\": <seconds>}}: {}",
                excerpt(body)
            )
        })
}

/// One case's timeline: lets case time pass up to each step's `at`.
pub struct Timeline {
    mode: TimeMode,
    start: Instant,
    /// The system clock when the case started (case time 0 on the wall clock).
    started: SystemTime,
    now: u64,
}

impl Timeline {
    pub fn start(mode: TimeMode) -> Timeline {
        Timeline {
            mode,
            start: Instant::now(),
            started: SystemTime::now(),
            now: 0,
        }
    }

    pub fn mode(&self) -> TimeMode {
        self.mode
    }

    /// The target's epoch seconds at case time 0: on the test clock, which
    /// moves only when the runner moves it, its `now` less the case time
    /// that has passed; on the wall clock, the system clock's when the case
    /// started.
    pub async fn origin(&self, client: &Client) -> Result<f64, String> {
        match self.mode {
            TimeMode::Manual => match target_now(client).await? {
                Some(now) => Ok((now - self.now as i64) as f64),
                None => Err(
                    "the target's test clock stopped answering GET /_emulator/clock".to_string(),
                ),
            },
            TimeMode::Wall(_) => Ok(self
                .started
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0)),
        }
    }

    /// Lets case time reach `at` (fixture seconds since the case started).
    pub async fn reach(&mut self, client: &Client, at: u64) -> Result<(), String> {
        if at > self.now {
            match self.mode {
                TimeMode::Manual => {
                    advance(client, at - self.now).await?;
                }
                TimeMode::Wall(wall) => {
                    tokio::time::sleep_until(self.start + wall.real(at)).await;
                }
            }
            self.now = at;
        }
        Ok(())
    }
}

/// The wall clock with the fixtures' seconds multiplied by `scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WallClock {
    pub scale: f64,
}

impl WallClock {
    pub fn new(scale: f64) -> Result<WallClock, String> {
        if scale.is_finite() && scale > 0.0 {
            Ok(WallClock { scale })
        } else {
            Err(format!(
                "--time-scale must be a positive number, not {scale}"
            ))
        }
    }

    /// How close (in real seconds) a checkpoint may come to an expiry instant.
    pub fn tolerance(&self) -> f64 {
        WHOLE_SECOND + GUARD
    }

    /// The real time of case time `at`.
    pub fn real(&self, at: u64) -> Duration {
        Duration::from_secs_f64(at as f64 * self.scale)
    }

    /// The TTL value sent for a fixture's value: scaled, at least 1 s.
    /// Only valid positive values below the maximum are scaled; -1, 0,
    /// the maximum and invalid values are sent as written.
    pub fn ttl(&self, value: &Value) -> Value {
        match value.as_u64() {
            Some(seconds) if seconds > 0 && seconds < MAX_TTL => {
                json!(((seconds as f64 * self.scale).round() as u64).max(1))
            }
            _ => value.clone(),
        }
    }

    /// A body with its top-level `ttl` and `defaultTtl` scaled.
    pub fn body(&self, body: &Map<String, Value>) -> Map<String, Value> {
        let mut body = body.clone();
        for key in ["ttl", "defaultTtl"] {
            if let Some(value) = body.get_mut(key) {
                *value = self.ttl(value);
            }
        }
        body
    }

    /// Patch operations with the values written to `/ttl` scaled.
    pub fn operations(&self, operations: &[Value]) -> Vec<Value> {
        operations
            .iter()
            .map(|op| {
                let mut op = op.clone();
                if op.get("path").and_then(Value::as_str) == Some("/ttl") {
                    if let Some(value) = op.get_mut("value") {
                        *value = self.ttl(value);
                    }
                }
                op
            })
            .collect()
    }
}
