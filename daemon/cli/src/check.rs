//! `elicit check`: lint an elicitation request, and optionally an answer.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use elicit_proto::{Answer, Elicitation, FieldError, Form, Limits, Mode, validate_answer};
use serde_json::{Value, json};

use crate::input::{Output, outln, read_capped};

/// Check `elicitation/create` params against the MCP schema subset.
///
/// Exit status: 0 valid, 1 invalid, 2 usage or I/O error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The params of `elicitation/create` as JSON (`-` for standard input).
    request: PathBuf,
    /// Also check this answer (`{"action": …, "content": …}`) against the
    /// request (`-` for standard input).
    #[arg(long, value_name = "ANSWER.json")]
    answer: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = Output::default();
    match check(args, &mut out) {
        Ok(code) => {
            out.flush();
            Ok(code)
        }
        // Usage and I/O errors exit 2, unlike the other commands' errors.
        Err(error) => {
            crate::out::esay!("elicit: {error:#}");
            Ok(ExitCode::from(2))
        }
    }
}

fn check(args: Args, out: &mut Output) -> anyhow::Result<ExitCode> {
    if args.request.as_os_str() == "-" && args.answer.as_deref().is_some_and(|a| a.as_os_str() == "-") {
        bail!("only one of REQUEST and --answer can be read from standard input");
    }
    let limits = Limits::default();
    let text = read_capped(&args.request, limits.max_request_bytes)?;
    // Text that is not JSON at all is an input error (exit 2), not a form
    // that breaks a rule (exit 1).
    let params: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", display_name(&args.request)))?;
    let request = match Elicitation::from_value(params, &limits) {
        Ok(request) => request,
        Err(errors) => {
            if args.json {
                let errors: Vec<Value> = errors
                    .0
                    .iter()
                    .map(|e| json!({"location": e.location.to_string(), "rule": e.rule, "detail": e.detail}))
                    .collect();
                out.json(&json!({"valid": false, "errors": errors}));
            } else {
                outln!(
                    out,
                    "invalid request: {} problem{}",
                    errors.0.len(),
                    plural(errors.0.len())
                );
                for error in &errors.0 {
                    outln!(out, "  {error}");
                }
            }
            return Ok(ExitCode::from(1));
        }
    };
    let Some(answer_path) = args.answer else {
        print_request(out, &request, args.json);
        return Ok(ExitCode::SUCCESS);
    };
    let text = read_capped(&answer_path, limits.max_answer_bytes)?;
    let answer: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", display_name(&answer_path)))?;
    // JSON that is not an answer (an unknown action such as "maybe", a
    // missing action) is an answer that breaks the rules: exit 1, like
    // any other invalid answer, not a usage error.
    let verdict = match serde_json::from_value::<Answer>(answer.clone()) {
        // The broker fills omitted defaults before it validates; so does
        // the check, so that both give the same verdict.
        Ok(answer) => validate_answer(&request, &answer.completed(&request), &limits),
        Err(_) => Err(vec![not_an_answer(&answer)]),
    };
    if args.json {
        let errors = verdict.as_ref().err().cloned().unwrap_or_default();
        out.json(&json!({"valid": verdict.is_ok(), "errors": errors}));
    } else {
        match &verdict {
            Ok(()) => outln!(out, "valid answer"),
            Err(errors) => {
                outln!(
                    out,
                    "invalid answer: {} problem{}",
                    errors.len(),
                    plural(errors.len())
                );
                for error in errors {
                    outln!(out, "  {error}");
                }
            }
        }
    }
    Ok(if verdict.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_request(out: &mut Output, request: &Elicitation, as_json: bool) {
    match (&request.mode, as_json) {
        (Mode::Form(form), true) => {
            out.json(&json!({"valid": true, "mode": "form", "message": request.message, "fields": form.fields}))
        }
        (Mode::Url { url, elicitation_id }, true) => out.json(
            &json!({"valid": true, "mode": "url", "message": request.message, "url": url.as_str(), "elicitationId": elicitation_id}),
        ),
        (Mode::Form(form), false) => print_form(out, &request.message, form),
        (Mode::Url { url, .. }, false) => {
            outln!(out, "valid URL request: {:?}", request.message);
            outln!(out, "  opens {} (host {})", url, url.host_str().unwrap_or("?"));
        }
    }
}

fn print_form(out: &mut Output, message: &str, form: &Form) {
    if form.is_confirmation() {
        outln!(out, "valid confirmation: {message:?}");
        return;
    }
    outln!(
        out,
        "valid form: {message:?} ({} field{})",
        form.fields.len(),
        plural(form.fields.len())
    );
    let width = form.fields.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for field in &form.fields {
        let required = if field.required { "required" } else { "optional" };
        outln!(
            out,
            "  {:width$}  {:12}  {}  {:?}",
            field.name,
            field.kind.name(),
            required,
            field.label
        );
    }
}

/// Why `answer`, valid JSON, is no `{"action", "content"}` answer.
fn not_an_answer(answer: &Value) -> FieldError {
    let message = match answer.get("action") {
        Some(Value::String(action)) => {
            format!("unknown action {action:?}; it must be accept, decline or cancel")
        }
        Some(other) => format!("`action` must be accept, decline or cancel, not {other}"),
        None if answer.is_object() => "has no `action` (accept, decline or cancel)".to_owned(),
        None => "must be an object {\"action\": …, \"content\": …}".to_owned(),
    };
    FieldError {
        field: String::new(),
        message,
    }
}

fn display_name(path: &std::path::Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
