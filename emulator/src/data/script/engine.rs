//! One execution of a script in QuickJS (`rquickjs`): a fresh runtime and
//! context each time, so nothing leaks between executions, bounded in time
//! by an interrupt handler (uncatchable by the script), in memory by the
//! runtime's limit and in depth by its stack limit.
//!
//! The server-side API is `prelude.js`, evaluated first; the only native
//! function it gets is the host callback (`host.rs`). This module drives it:
//! compile the script, start it, run promise jobs and queued callbacks until
//! none remain, and read the outcome.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rquickjs::module::WriteOptions;
use rquickjs::{
    CatchResultExt, CaughtError, Context, Ctx, Function, Module, Object, Runtime, Value,
};
use serde::Deserialize;

const ERRORS: &str = include_str!("errors.js");
const PRELUDE: &str = include_str!("prelude.js");

/// What bounds one execution.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The service's bound: 5 s per execution.
    pub time: Duration,
    /// The heap of one execution's runtime.
    pub memory: usize,
    /// How deep the script may recurse (bytes of native stack).
    pub stack: usize,
}

impl Limits {
    pub const SERVICE: Limits = Limits {
        time: Duration::from_secs(5),
        memory: 64 << 20,
        stack: 512 << 10,
    };

    /// The instant from which collection calls are no longer accepted, so
    /// that a script that pages on and on ends by itself before the bound
    /// (the service's "graceful" stop): four fifths of the way.
    pub fn soft_deadline(&self, started: Instant) -> Instant {
        started + self.time * 4 / 5
    }
}

/// What the script threw (or passed to `getContext().abort`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Thrown {
    /// An `Error` (its name and message), or another value (printed).
    #[serde(default)]
    pub error: bool,
    #[serde(default)]
    pub name: Option<String>,
    pub message: String,
    /// `new Error(number, message)`, or a failed operation's status.
    #[serde(default)]
    pub number: Option<f64>,
    #[serde(default)]
    pub stack: Option<String>,
}

/// How an execution ended.
#[derive(Debug)]
pub enum Ending {
    /// It returned: the body it left (JSON text, `None` for undefined).
    Done { body: Option<String> },
    /// The script does not compile: the engine's message.
    Compile(String),
    /// It threw, or aborted.
    Threw(Thrown),
    /// It ran past the time bound.
    TimedOut,
    /// It needed more memory than one execution may have.
    OutOfMemory,
}

/// The ending, and what `console.log` wrote (with logging on).
#[derive(Debug)]
pub struct Outcome {
    pub ending: Ending,
    pub log: String,
}

/// The prelude's outcome record.
#[derive(Deserialize)]
struct Finish {
    #[serde(default)]
    failure: Option<Thrown>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    log: String,
}

/// Runs `source` (a function expression, as stored) with the prelude set up
/// by `setup` (JSON), calling it with `args` (a JSON array, as sent), every
/// collection call going to `host(operation, arguments_json)`.
pub fn run(
    source: &str,
    setup: &str,
    args: Option<&str>,
    host: impl FnMut(&str, &str) -> String + 'static,
    limits: Limits,
) -> Outcome {
    let sandbox = match Sandbox::new(limits) {
        Ok(sandbox) => sandbox,
        Err(ending) => {
            return Outcome {
                ending,
                log: String::new(),
            }
        }
    };
    let outcome = run_bounded(source, setup, args, host, &sandbox);
    if sandbox.timed_out() {
        return Outcome {
            ending: Ending::TimedOut,
            log: String::new(),
        };
    }
    outcome.unwrap_or_else(|ending| Outcome {
        ending,
        log: String::new(),
    })
}

/// A fresh runtime and context, bounded by `limits` from now on; the flag
/// says whether the time bound interrupted it.
pub(super) struct Sandbox {
    /// The context holds its runtime (and the runtime its limits).
    pub context: Context,
    pub timed_out: Arc<AtomicBool>,
}

impl Sandbox {
    pub fn new(limits: Limits) -> Result<Self, Ending> {
        let runtime = Runtime::new().map_err(|_| Ending::OutOfMemory)?;
        runtime.set_memory_limit(limits.memory);
        runtime.set_max_stack_size(limits.stack);
        let deadline = Instant::now() + limits.time;
        let timed_out = Arc::new(AtomicBool::new(false));
        let flag = timed_out.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let over = Instant::now() >= deadline;
            if over {
                flag.store(true, Ordering::Release);
            }
            over
        })));
        let context = Context::full(&runtime).map_err(|_| Ending::OutOfMemory)?;
        Ok(Sandbox { context, timed_out })
    }

    pub fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::Acquire)
    }
}

/// Makes `Error` the service's and returns `errors.js`'s record
/// (`NativeError`, `describe`).
pub(super) fn install_errors<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let install = compiled(ctx, &bytecode().errors)?;
    install.call((ctx.globals(),))
}

/// `errors.js` and `prelude.js` as QuickJS bytecode (modules whose default
/// export is the file's function), compiled once per process on first use:
/// loading them costs a third of parsing them again for every execution.
struct Bytecode {
    errors: Vec<u8>,
    prelude: Vec<u8>,
}

fn bytecode() -> &'static Bytecode {
    static BYTECODE: OnceLock<Bytecode> = OnceLock::new();
    BYTECODE.get_or_init(|| {
        let runtime = Runtime::new().expect("a QuickJS runtime");
        let context = Context::full(&runtime).expect("a QuickJS context");
        context.with(|ctx| {
            let write = |name: &str, source: &str| {
                Module::declare(ctx.clone(), name, format!("export default {source}"))
                    .and_then(|module| module.write(WriteOptions::default()))
                    .expect("the prelude compiles")
            };
            Bytecode {
                errors: write("errors", ERRORS),
                prelude: write("prelude", PRELUDE),
            }
        })
    })
}

/// The function a compiled prelude module exports.
fn compiled<'js>(ctx: &Ctx<'js>, bytes: &'static [u8]) -> rquickjs::Result<Function<'js>> {
    // Safety: the bytes were written by this build's QuickJS, in this
    // process (`bytecode`), and live as long as the process (QuickJS keeps
    // referring to them).
    let module = unsafe { Module::load(ctx.clone(), bytes)? };
    let (module, _) = module.eval()?;
    module.get("default")
}

fn run_bounded(
    source: &str,
    setup: &str,
    args: Option<&str>,
    host: impl FnMut(&str, &str) -> String + 'static,
    sandbox: &Sandbox,
) -> Result<Outcome, Ending> {
    let context = &sandbox.context;
    let host = Rc::new(RefCell::new(host));
    context.with(|ctx| {
        let driver = prelude(&ctx, setup, host).map_err(|e| internal(&ctx, e))?;
        let function = compile(&ctx, source)?;
        let start: Function = driver.get("start").map_err(|e| internal(&ctx, e))?;
        let step: Function = driver.get("step").map_err(|e| internal(&ctx, e))?;
        let finish: Function = driver.get("finish").map_err(|e| internal(&ctx, e))?;
        let started: bool = start.call((function, args)).catch(&ctx).map_err(uncaught)?;
        if started {
            loop {
                while ctx.execute_pending_job() {}
                let more: bool = step.call(()).catch(&ctx).map_err(uncaught)?;
                if !more {
                    break;
                }
            }
            // Promise jobs the last callback left (they cannot fail the run).
            while ctx.execute_pending_job() {}
        }
        let finished: String = finish.call(()).catch(&ctx).map_err(uncaught)?;
        let finished: Finish = serde_json::from_str(&finished)
            .map_err(|e| thrown_internal(&format!("unreadable outcome: {e}")))?;
        let ending = match finished.failure {
            Some(thrown) if is_out_of_memory(&thrown.message) => Ending::OutOfMemory,
            Some(thrown) => Ending::Threw(thrown),
            None => Ending::Done {
                body: finished.body,
            },
        };
        Ok(Outcome {
            ending,
            log: finished.log,
        })
    })
}

/// Evaluates the prelude and calls it: the driver object.
fn prelude<'js>(
    ctx: &Ctx<'js>,
    setup: &str,
    host: Rc<RefCell<impl FnMut(&str, &str) -> String + 'static>>,
) -> rquickjs::Result<Object<'js>> {
    let errors = install_errors(ctx)?;
    let install = compiled(ctx, &bytecode().prelude)?;
    let host = Function::new(ctx.clone(), move |operation: String, arguments: String| {
        (host.borrow_mut())(&operation, &arguments)
    })?;
    let setup = ctx.json_parse(setup)?;
    install.call((ctx.globals(), host, setup, errors))
}

/// The script's function. The body is an expression, evaluated as the
/// service does (`var fn = <body>;` in a wrapper), so that a trailing `;`
/// and arrow functions work and line numbers are the body's own.
pub(super) fn compile<'js>(ctx: &Ctx<'js>, source: &str) -> Result<Value<'js>, Ending> {
    let wrapped = format!("{WRAPPER_START}{source}\n;return fn; }})()");
    ctx.eval::<Value, _>(wrapped)
        .catch(ctx)
        .map_err(|caught| match caught {
            CaughtError::Exception(e) => {
                let message = e.message().unwrap_or_default();
                if is_out_of_memory(&message) {
                    return Ending::OutOfMemory;
                }
                let name = e
                    .get::<_, String>("name")
                    .unwrap_or_else(|_| "SyntaxError".into());
                let place = e.stack().and_then(|s| source_place(&s));
                Ending::Compile(match place {
                    Some((line, column)) => {
                        format!(
                            "{name}: {message} Source information: line: {line}, column: {column}"
                        )
                    }
                    None => format!("{name}: {message}"),
                })
            }
            other => uncaught(other),
        })
}

/// What comes before the body on its first line.
const WRAPPER_START: &str = "(function __docDbMain() { var fn = ";

/// `line:column` in the body of the first frame of an evaluation's stack
/// (`at eval_script:1:58`): the wrapper shifts the first line's columns.
fn source_place(stack: &str) -> Option<(u32, u32)> {
    let at = stack.find("eval_script:")? + "eval_script:".len();
    let rest = &stack[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':'))
        .unwrap_or(rest.len());
    let mut parts = rest[..end].split(':');
    let (line, column): (u32, u32) = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
    let shift = if line == 1 {
        WRAPPER_START.len() as u32
    } else {
        0
    };
    Some((line, column.saturating_sub(shift).max(1)))
}

/// An exception the prelude did not catch: the interrupt (the time bound:
/// `run` reports it), memory exhausted, or the prelude's own failure.
pub(super) fn uncaught(caught: CaughtError<'_>) -> Ending {
    match caught {
        CaughtError::Error(rquickjs::Error::Allocation) => Ending::OutOfMemory,
        CaughtError::Exception(e) => {
            let message = e.message().unwrap_or_default();
            if is_out_of_memory(&message) {
                Ending::OutOfMemory
            } else {
                thrown_internal(&message)
            }
        }
        CaughtError::Value(v) => {
            let text = v
                .as_string()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_else(|| format!("{:?}", v.type_of()));
            thrown_internal(&text)
        }
        CaughtError::Error(e) => {
            let text = e.to_string();
            if is_out_of_memory(&text) {
                Ending::OutOfMemory
            } else {
                thrown_internal(&text)
            }
        }
    }
}

fn internal(ctx: &Ctx<'_>, error: rquickjs::Error) -> Ending {
    match error {
        rquickjs::Error::Exception => uncaught(CaughtError::from_error(ctx, error)),
        rquickjs::Error::Allocation => Ending::OutOfMemory,
        other => thrown_internal(&other.to_string()),
    }
}

fn thrown_internal(message: &str) -> Ending {
    Ending::Threw(Thrown {
        error: true,
        name: Some("InternalError".into()),
        message: message.to_string(),
        number: None,
        stack: None,
    })
}

fn is_out_of_memory(message: &str) -> bool {
    message.contains("out of memory")
}
