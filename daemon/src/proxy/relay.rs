//! The relay: starts the server, pumps both streams, and ends with it.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use elicit_proto::dbus::Origin;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::broker::Broker;
use super::dispatch;
use super::framing::LineReader;
use super::outbox::{Out, Outbox};
use super::state::{Ctx, State};
use super::{Options, ProxyError};

/// Bytes read from a peer at once: a pipe holds 64 KiB, so a large result
/// is taken in whole pipe-fulls rather than 8 KiB system calls.
const READ_BUFFER: usize = 64 * 1024;

/// Lines already queued are written together up to this many bytes, with
/// one flush: a server that streams results costs one write (for stdout,
/// one trip through tokio's blocking pool) per batch, not per line.
const WRITE_BATCH: usize = 1024 * 1024;

/// How long shutdown waits for the host writer and the broker session.
const SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs the proxy until the server exits; returns the server's exit code
/// (128 + signal when a signal ended it), which the proxy should exit
/// with.
pub async fn run(options: Options) -> Result<i32, ProxyError> {
    let Some(program) = options.command.first().cloned() else {
        return Err(ProxyError::NoCommand);
    };
    let mut child = Command::new(&program)
        .args(&options.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // Never orphan the server, whatever path leaves this function.
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| ProxyError::Spawn {
            command: program.clone(),
            source,
        })?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(ProxyError::Io {
            what: "the server's pipes",
            source: std::io::Error::other("not captured"),
        });
    };

    let origin = Arc::new(Mutex::new(initial_origin(&options.command)));
    let (broker, broker_task) = Broker::start(options.bus.clone(), origin.clone());
    let (host_tx, host_rx) = mpsc::unbounded_channel();
    let (server_tx, server_rx) = mpsc::unbounded_channel();
    let host_writer = tokio::spawn(write_lines(tokio::io::stdout(), host_rx));
    let server_writer = tokio::spawn(write_lines(server_in, server_rx));
    let ctx = Ctx {
        outbox: Outbox::new(host_tx, server_tx),
        broker,
        state: Arc::new(Mutex::new(State::default())),
        origin,
        options: Arc::new(options),
    };

    let signal = |kind| {
        signal(kind).map_err(|source| ProxyError::Io {
            what: "installing a signal handler",
            source,
        })
    };
    let cap = ctx.options.max_line_bytes;
    let mut from_host = LineReader::new(BufReader::with_capacity(READ_BUFFER, tokio::io::stdin()), cap);
    let mut from_server = LineReader::new(BufReader::with_capacity(READ_BUFFER, server_out), cap);
    let mut host_open = true;
    let grace = tokio::time::sleep(std::time::Duration::MAX);
    tokio::pin!(grace);
    let mut killed = false;
    // A host that stops the proxy with a signal gets the same orderly end
    // as one that closes its input: the server is not left behind.
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    loop {
        tokio::select! {
            frame = from_host.next(), if host_open => match frame {
                Ok(Some(frame)) => dispatch::from_host(&ctx, frame),
                Ok(None) | Err(_) => {
                    // The host is gone: the server learns it by EOF and
                    // gets a grace period to exit on its own.
                    host_open = false;
                    ctx.outbox.close_server();
                    grace.as_mut().reset(tokio::time::Instant::now() + ctx.options.exit_grace);
                }
            },
            frame = from_server.next() => match frame {
                Ok(Some(frame)) => dispatch::from_server(&ctx, frame),
                Ok(None) | Err(_) => break,
            },
            _ = async {
                tokio::select! {
                    _ = terminate.recv() => {},
                    _ = hangup.recv() => {},
                    _ = interrupt.recv() => {},
                }
            }, if host_open => {
                host_open = false;
                ctx.outbox.close_server();
                grace.as_mut().reset(tokio::time::Instant::now() + ctx.options.exit_grace);
            }
            () = &mut grace, if !host_open && !killed => {
                eprintln!("elicit proxy: the server did not exit after its input closed; killing it");
                killed = true;
                let _ = child.start_kill();
            }
        }
    }

    // The server closed its output: it is exiting (or killed); reap it.
    let status = tokio::select! {
        status = child.wait() => status,
        () = tokio::time::sleep(ctx.options.exit_grace) => {
            let _ = child.start_kill();
            child.wait().await
        }
    }
    .map_err(|source| ProxyError::Io {
        what: "waiting for the server",
        source,
    })?;
    // Withdraw every open form: nobody is left to receive its answer.
    ctx.cancel_everything();
    // Let queued lines reach the host (tasks may still hold the outbox, so
    // the writer is told to stop rather than waiting for them).
    ctx.outbox.close_host();
    let _ = tokio::time::timeout(SHUTDOWN, host_writer).await;
    server_writer.abort();
    drop(ctx);
    // The session closes when the actor's last handle goes; a task still
    // winding down may hold one, and then the bus connection closing at
    // exit ends the session instead.
    let _ = tokio::time::timeout(SHUTDOWN, broker_task).await;
    Ok(exit_code(status))
}

fn initial_origin(command: &[String]) -> Origin {
    // The server's own name arrives with its first result; until then the
    // program's file name stands in for it.
    let server = command
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned());
    Origin {
        server,
        command: Some(command.join(" ")),
        cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
        pid: Some(std::process::id()),
        ..Origin::default()
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// Writes each line with its newline and flushes as soon as nothing more
/// is queued, so that the peer sees every line at once; lines that queued
/// up meanwhile go out in one write (see [`WRITE_BATCH`]).
async fn write_lines(mut sink: impl AsyncWrite + Unpin, mut lines: mpsc::UnboundedReceiver<Out>) {
    let mut open = true;
    while open {
        let Some(Out::Line(mut out)) = lines.recv().await else {
            break;
        };
        // A lone line goes out as it is, without a copy; the next ones
        // queued are appended to it.
        out.push(b'\n');
        while out.len() < WRITE_BATCH {
            match lines.try_recv() {
                Ok(Out::Line(next)) => {
                    out.extend_from_slice(&next);
                    out.push(b'\n');
                }
                Ok(Out::Close) => {
                    open = false;
                    break;
                }
                Err(_) => break,
            }
        }
        if sink.write_all(&out).await.is_err() || sink.flush().await.is_err() {
            break;
        }
    }
    let _ = sink.shutdown().await;
}
