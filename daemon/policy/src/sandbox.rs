//! The Rhai engine rules run in: no files, no network, no modules, no
//! `eval`, and limits on operations, time, depth and sizes.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use rhai::packages::{Package, StandardPackage};
use rhai::{AST, Dynamic, Engine, EvalAltResult, FnPtr, ImmutableString};

use crate::budget::Budget;
use crate::helpers;

/// How often (in operations) the time budget is checked; reading the clock
/// on every operation would cost more than the rules.
const CLOCK_EVERY: u64 = 256;

thread_local! {
    /// The rules a file registers while its top level runs; `None` outside
    /// loading, so that `rule()` called later is an error.
    static REGISTERED: RefCell<Option<Vec<(String, FnPtr)>>> = const { RefCell::new(None) };
    /// When the script running on this thread must stop. Thread-local
    /// because one engine serves every thread, each with its own deadline.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// A named rule: what `rule("name", |request, origin| …)` registered.
pub(crate) type Rule = (String, FnPtr);

/// Builds the sandboxed engine with the rule API registered.
pub(crate) fn engine(budget: &Budget) -> Engine {
    // `new_raw` has no module resolver and prints nowhere; only the pure
    // standard library is added back.
    let mut engine = Engine::new_raw();
    engine.register_global_module(StandardPackage::new().as_shared_module());
    engine.disable_symbol("eval");
    engine.disable_symbol("import");
    engine.set_strict_variables(true);
    engine.set_max_operations(budget.max_operations);
    engine.set_max_call_levels(budget.max_call_levels);
    engine.set_max_string_size(budget.max_string_size);
    engine.set_max_array_size(budget.max_array_size);
    engine.set_max_map_size(budget.max_map_size);
    engine.set_max_expr_depths(budget.max_expr_depth, budget.max_expr_depth);
    engine.on_progress(|operations| {
        if operations % CLOCK_EVERY != 0 {
            return None;
        }
        let late = DEADLINE.with(|deadline| deadline.get().is_some_and(|d| Instant::now() >= d));
        late.then(|| Dynamic::from("the rule ran past its time budget"))
    });
    engine.on_print(|text| tracing::info!(target: "elicitd_policy::script", "{text}"));
    engine.on_debug(|text, source, position| {
        tracing::debug!(target: "elicitd_policy::script", source = source.unwrap_or(""), %position, "{text}");
    });
    engine.register_fn("rule", register_rule);
    helpers::register(&mut engine);
    engine
}

/// `rule(name, function)`: valid only while a file loads.
fn register_rule(name: ImmutableString, function: FnPtr) -> Result<(), Box<EvalAltResult>> {
    REGISTERED.with(|registered| match registered.borrow_mut().as_mut() {
        Some(rules) => {
            rules.push((name.to_string(), function));
            Ok(())
        }
        None => Err("rule() may only be called at the top level of a rules file".into()),
    })
}

/// Compiles a file and runs its top level, returning the rules it
/// registered, or why it cannot be used.
pub(crate) fn load(
    engine: &Engine,
    name: &str,
    text: &str,
    time: Duration,
) -> Result<(AST, Vec<Rule>), String> {
    let mut ast = engine.compile(text).map_err(|error| error.to_string())?;
    ast.set_source(name);
    REGISTERED.with(|registered| *registered.borrow_mut() = Some(Vec::new()));
    let ran = with_deadline(time, || engine.run_ast(&ast));
    let rules = REGISTERED
        .with(|registered| registered.borrow_mut().take())
        .unwrap_or_default();
    ran.map_err(|error| describe(&error))?;
    Ok((ast, rules))
}

/// Calls one rule with the request and origin views.
pub(crate) fn call(
    engine: &Engine,
    ast: &AST,
    rule: &FnPtr,
    request: Dynamic,
    origin: Dynamic,
    time: Duration,
) -> Result<Dynamic, String> {
    with_deadline(time, || rule.call::<Dynamic>(engine, ast, (request, origin)))
        .map_err(|error| describe(&error))
}

/// An error as a sentence; a stop by the time budget says so, where Rhai
/// would only say "terminated".
fn describe(error: &EvalAltResult) -> String {
    match error {
        EvalAltResult::ErrorTerminated(token, _) => token.to_string(),
        other => other.to_string(),
    }
}

/// Runs `f` with this thread's deadline set `time` from now, restoring the
/// previous one after.
fn with_deadline<T>(time: Duration, f: impl FnOnce() -> T) -> T {
    let previous = DEADLINE.with(|deadline| deadline.replace(Some(Instant::now() + time)));
    let result = f();
    DEADLINE.with(|deadline| deadline.set(previous));
    result
}
