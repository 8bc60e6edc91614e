//! A relay of `elicit-proxy` whose host end lives in this process: lines
//! from HTTP requests go in through a bounded channel, and every line the
//! relay writes for the host goes to a [`Router`].

use std::future::Future;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use elicit_proxy::framing::{Frame, LineReader};
use elicit_proxy::{Ends, Options};
use tokio::io::BufReader;
use tokio::sync::{mpsc, oneshot};
use tokio_util::task::TaskTracker;

use super::ServeError;
use super::settings::Upstream;
use super::upstream;

/// Lines waiting for the relay to read them: a POST waits for room, so a
/// stuck server holds its clients back rather than growing a queue.
const INPUT_LINES: usize = 16;

/// The pipe between the relay's host writer and the router: what a
/// burst of lines may take before the relay waits.
const OUTPUT_BYTES: usize = 256 * 1024;

/// Takes the lines a relay writes for its host.
pub trait Router: Send + Sync + 'static {
    /// One line (without its newline). The relay waits while this runs:
    /// it is how a slow client holds back its server.
    fn line(&self, line: Vec<u8>) -> impl Future<Output = ()> + Send;
    /// The relay has ended (its server is gone); no line follows.
    fn ended(&self) -> impl Future<Output = ()> + Send;
}

/// One running relay, seen from the HTTP side.
#[derive(Debug)]
pub struct Pipe {
    input: mpsc::Sender<Bytes>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    /// The relay's forms waiting for the broker.
    asked: elicit_proxy::asked::Asked,
}

impl Pipe {
    /// Starts a relay in front of `upstream`, its host output routed to
    /// `router`; its tasks are tracked by `tracker`, so that shutdown can
    /// wait for every server to end.
    pub fn start<R: Router>(
        upstream: &Upstream,
        options: &Options,
        router: Arc<R>,
        tracker: &TaskTracker,
    ) -> Result<Pipe, ServeError> {
        let server = upstream::connect(upstream)?;
        let (input, lines) = mpsc::channel::<Bytes>(INPUT_LINES);
        let host_input = crate::lines::reader(lines);
        let (host_output, from_relay) = tokio::io::duplex(OUTPUT_BYTES);
        let (stop, stopped) = oneshot::channel::<()>();
        let ends = Ends {
            host_input: Box::new(host_input),
            host_output: Box::new(host_output),
            server,
            // Fires on `Pipe::stop`, and when the pipe is dropped.
            stop: Box::pin(async move {
                let _ = stopped.await;
            }),
        };
        let mut options = options.clone();
        // This relay's own count, not one shared with every relay the
        // options were cloned for.
        let asked = elicit_proxy::asked::Asked::default();
        options.asked = asked.clone();
        if let Upstream::Command(command) = upstream {
            options.command = command.clone();
        }
        let cap = options.max_line_bytes;
        tracker.spawn(async move {
            match elicit_proxy::run_with(options, ends).await {
                Ok(code) => tracing::info!(code, "a relay's server ended"),
                Err(error) => tracing::warn!(%error, "a relay failed"),
            }
        });
        tracker.spawn(async move {
            let mut reader = LineReader::new(BufReader::new(from_relay), cap);
            // Ends when the relay drops its host output, which it does
            // once its server has ended.
            loop {
                match reader.next().await {
                    Ok(Some(Frame::Line(line))) => router.line(line).await,
                    Ok(Some(Frame::TooLong { bytes })) => {
                        tracing::warn!(bytes, "dropped a line longer than the cap from a relay");
                    }
                    Ok(None) | Err(_) => break,
                }
            }
            router.ended().await;
        });
        Ok(Pipe {
            input,
            stop: Mutex::new(Some(stop)),
            asked,
        })
    }

    /// Gives the relay one line (its newline included), waiting for room;
    /// false when the relay no longer reads (its server ended, or it was
    /// stopped).
    pub async fn send(&self, line: Bytes) -> bool {
        self.input.send(line).await.is_ok()
    }

    /// A handle that can write to the relay without keeping its input
    /// open: the relay still sees its host leave when the pipe goes.
    pub fn weak_input(&self) -> mpsc::WeakSender<Bytes> {
        self.input.downgrade()
    }

    /// Whether a form of this relay waits for the broker's reply.
    pub fn asking(&self) -> bool {
        self.asked.count() > 0
    }

    /// Ends the relay as if its host had left: the server's input closes
    /// and the server gets its grace period, then TERM and KILL.
    pub fn stop(&self) {
        if let Ok(mut stop) = self.stop.lock()
            && let Some(stop) = stop.take()
        {
            let _ = stop.send(());
        }
    }
}
