//! The relay: starts the server, pumps both streams, and ends with it.

use std::future::Future;
use std::io::IoSlice;
use std::os::fd::AsFd;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use elicit_proto::dbus::Origin;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::Instant;

use chrono::Utc;
use tokio::task::JoinSet;

use super::actor::Actor;
use super::backlog::Backlog;
use super::broker::Broker;
use super::buffers::Buffers;
use super::cancel::Cancel;
use super::decide::{Config, Core, Input};
use super::framing::LineReader;
use super::outbox::{Out, Outbox, Peer, Writer};
use super::server::Server;
use super::stdio::{self, HostInput, HostOutput};
use super::{Options, ProxyError};
use crate::say;

/// Bytes read from a peer at once: a pipe holds 64 KiB, so a large result
/// is taken in whole pipe-fulls rather than 8 KiB system calls.
const READ_BUFFER: usize = 256 * 1024;

/// Lines already queued are written together up to this many bytes, with
/// one flush: a server that streams results costs one system call per
/// batch, not per line.
const WRITE_BATCH: usize = 1024 * 1024;

/// At most this many lines per batch: each is two slices of one `writev`,
/// which takes at most 1024 (`IOV_MAX`).
const WRITE_BATCH_LINES: usize = 512;

/// How long shutdown waits for the host writer and the broker session.
const SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(2);

/// The two peers of one relay, whatever carries them.
pub struct Ends {
    /// Lines from the host.
    pub host_input: HostInput,
    /// Lines for the host.
    pub host_output: HostOutput,
    /// The server's side.
    pub server: ServerEnd,
    /// Resolves when whoever runs the relay wants it to end as if the host
    /// had left (a signal, a closed HTTP session).
    pub stop: Stop,
}

/// The server's side of a relay: a command it started, or a transport to
/// a remote server.
pub struct ServerEnd {
    /// Lines for the server.
    pub input: Box<dyn AsyncWrite + Send + Unpin>,
    /// Lines from the server.
    pub output: Box<dyn AsyncRead + Send + Unpin>,
    /// The server's life: a process group, or a transport's task.
    pub life: Server,
    /// Who asks, as forms will name it until the peers name themselves.
    pub origin: Origin,
}

impl ServerEnd {
    /// Starts `command` on pipes, its tree ending within the default grace
    /// period (see [`ServerEnd::spawn`]).
    pub fn command(command: &[String]) -> Result<ServerEnd, ProxyError> {
        ServerEnd::spawn(command, super::Options::new(Vec::new()).exit_grace)
    }

    /// Starts `command` on pipes, under a warden that ends its whole tree
    /// (TERM, then KILL after `grace`) when told to or when the proxy ends.
    pub fn spawn(command: &[String], grace: std::time::Duration) -> Result<ServerEnd, ProxyError> {
        let (life, (input, output)) = Server::spawn(command, grace)?;
        stdio::widen(output.as_fd());
        Ok(ServerEnd {
            input: Box::new(input),
            output: Box::new(output),
            life,
            origin: command_origin(command),
        })
    }
}

/// Runs the proxy in front of `options.command` on the proxy's own stdio
/// until the server exits; returns the server's exit code (128 + signal
/// when a signal ended it), which the proxy should exit with.
pub async fn run(mut options: Options) -> Result<i32, ProxyError> {
    // The stdio proxy's parent is its host.
    options.host_process = super::parent::describe().await;
    let mut server = ServerEnd::spawn(&options.command, options.exit_grace)?;
    if super::hub::host_is_hub().await {
        let name = options.host_process.clone().unwrap_or_else(|| "a hub".to_owned());
        tracing::info!(hub = %name, "the host runs its servers from a hub: its folder is not the project's");
        super::hub::mark(&mut server.origin, name);
    }
    let ends = Ends {
        server,
        stop: stop_on_signals()?,
        host_input: stdio::host_input(),
        host_output: stdio::host_output(),
    };
    run_with(options, ends).await
}

/// Resolves on TERM, HUP or INT: a host that stops the proxy with a
/// signal has its forms withdrawn and the server's tree ended at once
/// (hosts send KILL soon after: Claude Code half a second later), not
/// after the grace period a host that merely closes its input gives.
pub fn stop_on_signals() -> Result<Stop, ProxyError> {
    let install = |kind| {
        signal(kind).map_err(|source| ProxyError::Io {
            what: "installing a signal handler",
            source,
        })
    };
    let mut terminate = install(SignalKind::terminate())?;
    let mut hangup = install(SignalKind::hangup())?;
    let mut interrupt = install(SignalKind::interrupt())?;
    Ok(Box::pin(async move {
        tokio::select! {
            _ = terminate.recv() => {},
            _ = hangup.recv() => {},
            _ = interrupt.recv() => {},
        }
    }))
}

/// What ends a relay as if the host had left, and its server at once.
pub type Stop = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Runs one relay between `ends` until the server has ended; returns its
/// exit code.
pub async fn run_with(options: Options, ends: Ends) -> Result<i32, ProxyError> {
    let Ends {
        host_input,
        host_output,
        server:
            ServerEnd {
                input: server_input,
                output: server_output,
                life: mut server,
                origin,
            },
        mut stop,
    } = ends;
    let origin = Arc::new(Mutex::new(origin));
    // The relay's tasks: when it returns, they end.
    let mut broker_task = JoinSet::new();
    let (broker, broker_actor) = Broker::start(options.bus.clone(), origin.clone());
    broker_task.spawn(broker_actor);
    let (host_tx, host_rx) = mpsc::unbounded_channel();
    let (server_tx, server_rx) = mpsc::unbounded_channel();
    let (host_backlog, server_backlog) = (Arc::new(Backlog::default()), Arc::new(Backlog::default()));
    let buffers = Buffers::default();
    // The host's output failing (EPIPE: the host closed it) means nobody
    // receives anything any more: the host has left.
    let host_broke = Cancel::new();
    let mut host_writer = JoinSet::new();
    host_writer.spawn(write_lines(
        host_output,
        host_rx,
        host_backlog.clone(),
        buffers.clone(),
        host_broke.clone(),
    ));
    let mut server_writer = JoinSet::new();
    server_writer.spawn(write_lines(
        server_input,
        server_rx,
        server_backlog.clone(),
        buffers.clone(),
        Cancel::new(),
    ));
    let outbox = Outbox::new(
        Writer::new(host_tx, host_backlog),
        Writer::new(server_tx, server_backlog),
    );
    let mut core = Core::new(Config::of(&options));
    let (mut actor, mut inputs) = Actor::new(
        outbox.clone(),
        broker.clone(),
        origin,
        options.keepalive,
        options.asked.clone(),
    );

    let cap = options.max_line_bytes;
    let grace = options.exit_grace;
    let mut from_host =
        LineReader::new(BufReader::with_capacity(READ_BUFFER, host_input), cap).recycling(buffers.clone());
    let mut from_server =
        LineReader::new(BufReader::with_capacity(READ_BUFFER, server_output), cap).recycling(buffers);
    let mut host_open = true;
    let mut server_open = true;
    let mut status = None;
    let mut ending = Ending::Running;
    let timer = tokio::time::sleep(std::time::Duration::MAX);
    tokio::pin!(timer);
    // Ends when the server has exited and its output is drained: a process
    // it started may still hold that output, which the escalation ends.
    while status.is_none() || server_open {
        let mut host_left = false;
        tokio::select! {
            // A line is read only once the queue it goes to has room:
            // a peer that stops reading holds the other one back.
            frame = async {
                outbox.room(Peer::Server).await;
                from_host.next().await
            }, if host_open => match frame {
                Ok(Some(frame)) => actor.run(core.handle(Utc::now(), Input::Host(frame))),
                Ok(None) | Err(_) => host_left = true,
            },
            frame = async {
                outbox.room(Peer::Host).await;
                from_server.next().await
            }, if server_open => match frame {
                Ok(Some(frame)) => actor.run(core.handle(Utc::now(), Input::Server(frame))),
                // The server closed its output but may still run: it gets
                // the grace period to exit, as after the host's EOF.
                Ok(None) | Err(_) => {
                    server_open = false;
                    if ending == Ending::Running {
                        outbox.close_server();
                        ending = Ending::Closing;
                        timer.as_mut().reset(Instant::now() + grace);
                    }
                }
            },
            () = &mut stop, if host_open => {
                host_left = true;
                if ending < Ending::Terminated {
                    server.terminate();
                    ending = Ending::Terminated;
                    timer.as_mut().reset(Instant::now() + grace);
                }
            }
            () = host_broke.cancelled(), if host_open => host_left = true,
            // What the actor's tasks report: the broker's replies, ticks.
            Some(input) = inputs.recv() => {
                actor.received(&input);
                actor.run(core.handle(Utc::now(), input));
            }
            () = actor.reaped() => {}
            exited = server.exited(), if status.is_none() => {
                status = Some(exited?);
                // The command the host started is gone; what it started
                // goes with it.
                if ending < Ending::Terminated {
                    server.terminate();
                    ending = Ending::Terminated;
                    timer.as_mut().reset(Instant::now() + grace);
                }
            }
            () = &mut timer, if ending != Ending::Running => match ending {
                Ending::Closing => {
                    say!("elicit proxy: the server did not exit after its input closed; terminating it");
                    server.terminate();
                    ending = Ending::Terminated;
                    timer.as_mut().reset(Instant::now() + grace);
                }
                Ending::Terminated => {
                    say!("elicit proxy: the server did not exit on TERM; killing it");
                    server.kill();
                    ending = Ending::Killed;
                    timer.as_mut().reset(Instant::now() + grace);
                }
                // Something left the group with the output still open:
                // stop waiting for it.
                Ending::Killed | Ending::Running => break,
            },
        }
        if host_left {
            host_open = false;
            // The host is the session's end: its forms go now, whatever
            // the server does next.
            broker.host_gone();
            actor.run(core.handle(Utc::now(), Input::HostLeft));
            if ending == Ending::Running {
                // The server learns it by EOF and gets a grace period to
                // exit on its own.
                outbox.close_server();
                ending = Ending::Closing;
                timer.as_mut().reset(Instant::now() + grace);
            }
        }
    }
    let status = match status {
        Some(status) => status,
        None => server.exited().await?,
    };
    // Withdraw every open form: nobody is left to receive its answer.
    // After the host left this runs a second time on purpose: a server in
    // its grace period may have asked a form since (a repeated withdrawal
    // of an older one is idempotent).
    actor.run(core.handle(Utc::now(), Input::HostLeft));
    // Let queued lines reach the host.
    outbox.close_host();
    let _ = tokio::time::timeout(SHUTDOWN, host_writer.join_next()).await;
    drop(server_writer);
    // The broker confirms each withdrawal before its session closes, which
    // it does when its last handle goes (or the bus connection closing at
    // exit ends the session instead).
    let _ = tokio::time::timeout(SHUTDOWN, async {
        while actor.asking() {
            match inputs.recv().await {
                Some(input) => actor.received(&input),
                None => break,
            }
        }
    })
    .await;
    drop((actor, broker, outbox));
    let _ = tokio::time::timeout(SHUTDOWN, broker_task.join_next()).await;
    // A process of the tree that let go of the output but ignores TERM.
    server.reap_group(grace).await;
    Ok(exit_code(status))
}

/// How far the end of the server has gone; each step has the grace period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ending {
    /// Running, the host connected.
    Running,
    /// Its input closed, waiting for it to exit on its own.
    Closing,
    /// Its group was sent TERM.
    Terminated,
    /// Its group was sent KILL.
    Killed,
}

/// The origin of a server the proxy starts as `command`.
pub fn command_origin(command: &[String]) -> Origin {
    // The server's own name arrives with its first result; until then the
    // program's file name stands in for it.
    let server = command
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned());
    Origin {
        server,
        command: Some(command.join(" ")),
        verified_exe: command
            .first()
            .and_then(|program| super::verify::resolve_executable(program))
            .map(|exe| exe.display().to_string()),
        verified_args: Some(command.iter().skip(1).cloned().collect()),
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
/// up meanwhile go out in one vectored write (see [`WRITE_BATCH`]), without
/// copying them together.
async fn write_lines(
    mut sink: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<Out>,
    backlog: Arc<Backlog>,
    buffers: Buffers,
    broke: Cancel,
) {
    let mut open = true;
    let mut batch: Vec<Vec<u8>> = Vec::new();
    while open {
        let Some(Out::Line(first)) = lines.recv().await else {
            break;
        };
        let mut bytes = first.len();
        batch.push(first);
        while bytes < WRITE_BATCH && batch.len() < WRITE_BATCH_LINES {
            match lines.try_recv() {
                Ok(Out::Line(next)) => {
                    bytes += next.len();
                    batch.push(next);
                }
                Ok(Out::Close) => {
                    open = false;
                    break;
                }
                Err(_) => break,
            }
        }
        let written = write_batch(&mut sink, &batch).await;
        for line in batch.drain(..) {
            buffers.give(line);
        }
        backlog.drained(bytes);
        if written.is_err() || sink.flush().await.is_err() {
            broke.cancel();
            break;
        }
    }
    // Nothing drains this queue any more: the relay must not wait for it.
    backlog.close();
    let _ = sink.shutdown().await;
}

/// Writes `lines`, each followed by a newline, with as few system calls as
/// the sink takes.
async fn write_batch(sink: &mut (impl AsyncWrite + Unpin), lines: &[Vec<u8>]) -> std::io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = lines
        .iter()
        .flat_map(|line| [IoSlice::new(line), IoSlice::new(b"\n")])
        .collect();
    let mut pending = &mut slices[..];
    while !pending.is_empty() {
        let written = sink.write_vectored(pending).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut pending, written);
    }
    Ok(())
}
