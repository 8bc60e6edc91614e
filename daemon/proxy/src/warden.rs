//! The warden: a small process between the proxy and the server that ends
//! the server's whole tree when the proxy ends, however it ends.
//!
//! A proxy killed with SIGKILL cannot clean up, so whatever ends the server
//! must outlive the proxy. The choices were:
//!
//! * `PR_SET_PDEATHSIG` in the server: it reaches the direct child only
//!   (`sh`, `npx`), not what that started (`node`);
//! * the proxy as `PR_SET_CHILD_SUBREAPER`: orphans come back to the proxy,
//!   which is exactly the process that is gone when it matters;
//! * a cgroup per server: not available to an unprivileged process
//!   everywhere (it needs a delegated subtree from systemd);
//! * a helper that holds the server's process group: a server that calls
//!   `setsid` (or starts a daemon) leaves the group, and the helper cannot
//!   even see where it went.
//!
//! So the warden combines two of them. It is the server's parent and a
//! child subreaper: every process of the tree that loses its parent is
//! re-parented to the warden, not to init, so the tree is always the
//! warden's descendants, whatever groups or sessions they moved to, and
//! the warden knows the tree is gone when `waitpid` has no child left. It
//! watches the proxy through a pidfd (readable once the proxy has exited,
//! by any death), in a process group of its own, so that a signal to the
//! proxy's group does not reach it. It takes orders from the proxy as
//! signals sent through a pidfd, which cannot hit a reused pid:
//!
//! * TERM (or INT): end the tree: TERM to every process of it, KILL after
//!   the grace period;
//! * USR1: KILL the tree now;
//! * the proxy gone (or HUP): as TERM, but KILL after
//!   [`PROXY_GONE_GRACE`] at most.
//!
//! The server's own exit ends the rest of the tree the same way as TERM.
//! The warden exits once the tree is gone, with the server's exit code
//! (128 + signal when a signal ended it), which the proxy passes on.
//!
//! The warden is the `elicit` binary started again with [`ARG`] as its
//! first argument; a binary that does not call [`run_if_asked`] first
//! thing (a test harness) has no warden, and the proxy falls back to
//! signalling the server's process group itself.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::Instant;

use super::procfs;
use crate::say;

/// The first argument that makes the binary a warden.
pub const ARG: &str = "__elicit-proxy-warden";

/// How long the tree may take to end on TERM once the proxy is gone,
/// before KILL: the host is gone too, so nothing waits for a clean end,
/// and the whole tree must be gone within a second of the proxy.
pub const PROXY_GONE_GRACE: Duration = Duration::from_millis(300);

/// How long the warden waits after KILL for processes it cannot kill
/// (another user's, through a set-user-id program) before it exits anyway.
const GIVE_UP: Duration = Duration::from_secs(2);

/// How often KILL is repeated while processes of the tree remain: one may
/// have forked between the look at `/proc` and the signal.
const KILL_AGAIN: Duration = Duration::from_millis(50);

/// The exit code when the warden itself could not do its job.
const EXIT_FAILED: u8 = 127;

static AVAILABLE: AtomicBool = AtomicBool::new(false);

/// Runs the warden when this process was started as one, returning its
/// exit code; otherwise records that this binary can be a warden and
/// returns `None`. Call it first thing in `main`, before any thread.
pub fn run_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    args.next();
    if args.next().as_deref() != Some(OsStr::new(ARG)) {
        AVAILABLE.store(true, Ordering::Relaxed);
        return None;
    }
    let code = match Orders::parse(args) {
        Some(orders) => serve(orders),
        None => {
            say!("elicit proxy: the warden was started without its arguments");
            EXIT_FAILED
        }
    };
    Some(ExitCode::from(code))
}

/// Whether this process's binary can be a warden.
pub fn available() -> bool {
    AVAILABLE.load(Ordering::Relaxed)
}

/// The warden's command line, after [`ARG`]: `GRACE_MS PROXY_PID -- CMD…`.
pub fn arguments(grace: Duration, command: &[String]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        ARG.into(),
        grace.as_millis().to_string().into(),
        std::process::id().to_string().into(),
        "--".into(),
    ];
    args.extend(command.iter().map(OsString::from));
    args
}

/// What the warden was asked to do.
struct Orders {
    grace: Duration,
    proxy: Pid,
    command: Vec<OsString>,
}

impl Orders {
    fn parse(mut args: impl Iterator<Item = OsString>) -> Option<Orders> {
        let grace = args.next()?.to_str()?.parse().ok().map(Duration::from_millis)?;
        let proxy = Pid::from_raw(args.next()?.to_str()?.parse().ok()?)?;
        if args.next().as_deref() != Some(OsStr::new("--")) {
            return None;
        }
        let command: Vec<OsString> = args.collect();
        (!command.is_empty()).then_some(Orders {
            grace,
            proxy,
            command,
        })
    }
}

fn serve(orders: Orders) -> u8 {
    // `ps` and `top` would show "exe" (the name of /proc/self/exe).
    let _ = rustix::thread::set_name(c"elicit-warden");
    // Orphans of the tree come back here rather than to init.
    if let Err(error) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        say!(
            "elicit proxy: warning: cannot become the server's subreaper ({error}); processes that leave its group may outlive it"
        );
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            say!("elicit proxy: the warden cannot start: {error}");
            return EXIT_FAILED;
        }
    };
    runtime.block_on(watch(orders))
}

/// How far the end of the tree has gone.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Running,
    /// TERM was sent; KILL at that instant.
    Terminating(Instant),
    /// KILL was sent at that instant; it is repeated until the tree is
    /// gone or [`GIVE_UP`] has passed.
    Killing(Instant),
}

/// The tree and how far its end has gone.
struct Tree {
    /// The server's pid, also its process group's id while it is unreaped.
    leader: Pid,
    /// The server's exit code, once reaped.
    status: Option<u8>,
    phase: Phase,
}

impl Tree {
    /// Every process of the tree gets `signal`: the server's group while
    /// the server is unreaped (its id cannot be reused until then), and
    /// every descendant of the warden, wherever it moved.
    fn signal(&self, signal: Signal) {
        if self.status.is_none() {
            let _ = rustix::process::kill_process_group(self.leader, signal);
        }
        for pid in procfs::own_descendants() {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }

    /// Ends the tree: TERM now, KILL after `grace`; an end already under
    /// way is only hastened.
    fn end(&mut self, grace: Duration) {
        let kill_at = Instant::now() + grace;
        match self.phase {
            Phase::Running => {
                self.signal(Signal::TERM);
                self.phase = Phase::Terminating(kill_at);
            }
            Phase::Terminating(at) if kill_at < at => self.phase = Phase::Terminating(kill_at),
            Phase::Terminating(_) | Phase::Killing(_) => {}
        }
    }

    fn kill(&mut self) {
        self.signal(Signal::KILL);
        if !matches!(self.phase, Phase::Killing(_)) {
            self.phase = Phase::Killing(Instant::now());
        }
    }

    /// When the next step is due, if one is.
    fn next_step(&self) -> Option<Instant> {
        match self.phase {
            Phase::Running => None,
            Phase::Terminating(at) => Some(at),
            Phase::Killing(_) => Some(Instant::now() + KILL_AGAIN),
        }
    }

    /// Reaps every child that ended; false once no child is left.
    fn reap(&mut self) -> bool {
        loop {
            match rustix::process::wait(WaitOptions::NOHANG) {
                Ok(Some((pid, status))) => {
                    if pid == self.leader {
                        self.status = Some(exit_code(status.exit_status(), status.terminating_signal()));
                    }
                }
                Ok(None) => return true,
                Err(Errno::INTR) => {}
                Err(Errno::CHILD) => return false,
                Err(error) => {
                    say!("elicit proxy: the warden cannot wait for the server: {error}");
                    return false;
                }
            }
        }
    }
}

/// A shell's exit code for a child that exited with `code` or was ended
/// by `signal` (128 + its number).
fn exit_code(code: Option<i32>, signal: Option<i32>) -> u8 {
    match (code, signal) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(EXIT_FAILED),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(EXIT_FAILED),
        (None, None) => EXIT_FAILED,
    }
}

async fn watch(orders: Orders) -> u8 {
    // Every handler is in place before the server starts: a SIGCHLD must
    // not be missed, and an order must not kill the warden instead.
    let install =
        |kind| signal(kind).map_err(|e| say!("elicit proxy: the warden cannot handle signals: {e}"));
    let (Ok(mut children), Ok(mut term), Ok(mut int), Ok(mut hup), Ok(mut usr1)) = (
        install(SignalKind::child()),
        install(SignalKind::terminate()),
        install(SignalKind::interrupt()),
        install(SignalKind::hangup()),
        install(SignalKind::user_defined1()),
    ) else {
        return EXIT_FAILED;
    };
    let mut proxy = ProxyWatch::open(orders.proxy);
    let leader = match start(&orders.command) {
        Ok(leader) => leader,
        Err(error) => {
            say!(
                "elicit proxy: could not start {}: {error}",
                orders.command[0].to_string_lossy()
            );
            return EXIT_FAILED;
        }
    };
    let mut tree = Tree {
        leader,
        status: None,
        phase: Phase::Running,
    };
    let mut proxy_gone = false;
    while tree.reap() {
        if tree.status.is_some() {
            // The command the host started is gone; what it started goes
            // with it.
            tree.end(orders.grace);
        }
        let step = tree.next_step();
        tokio::select! {
            _ = children.recv() => {}
            _ = term.recv() => tree.end(orders.grace),
            _ = int.recv() => tree.end(orders.grace),
            _ = usr1.recv() => tree.kill(),
            _ = hup.recv() => tree.end(PROXY_GONE_GRACE.min(orders.grace)),
            () = proxy.gone(), if !proxy_gone => {
                proxy_gone = true;
                tree.end(PROXY_GONE_GRACE.min(orders.grace));
            }
            () = sleep_until(step), if step.is_some() => match tree.phase {
                Phase::Killing(since) if since.elapsed() >= GIVE_UP => {
                    say!("elicit proxy: processes the server started cannot be killed; leaving them");
                    break;
                }
                _ => tree.kill(),
            },
        }
    }
    tree.status.unwrap_or(EXIT_FAILED)
}

/// Starts the server on the warden's own stdin and stdout (the proxy's
/// pipes), in a process group of its own, then lets go of those pipes: the
/// proxy must see the server's output end when the server's tree lets go
/// of it, not when the warden does.
fn start(command: &[OsString]) -> std::io::Result<Pid> {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned()?;
    let child = std::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()?;
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    rustix::stdio::dup2_stdin(&null)?;
    rustix::stdio::dup2_stdout(&null)?;
    // The child is reaped through `wait` with every other process of the
    // tree; its `Child` is not needed.
    Pid::from_raw(child.id() as i32).ok_or_else(|| std::io::Error::other("the server has no pid"))
}

/// The proxy's end: a pidfd polled on a thread of its own (it becomes
/// readable when the proxy exits), or the parent-death signal (HUP) on a
/// Linux without pidfds.
struct ProxyWatch(Option<tokio::sync::oneshot::Receiver<()>>);

impl ProxyWatch {
    fn open(proxy: Pid) -> ProxyWatch {
        let (gone, seen) = tokio::sync::oneshot::channel();
        match rustix::process::pidfd_open(proxy, PidfdFlags::empty()) {
            Ok(fd) => {
                let watcher = std::thread::Builder::new()
                    .name("proxy-watch".into())
                    .spawn(move || {
                        wait_readable(&fd);
                        let _ = gone.send(());
                    });
                if let Err(error) = watcher {
                    say!("elicit proxy: warning: cannot watch the proxy ({error})");
                    return ProxyWatch::by_signal();
                }
            }
            Err(_) => return ProxyWatch::by_signal(),
        }
        // The proxy may have died before the pidfd was open, and its pid
        // been reused: while it is still our parent, neither happened.
        if rustix::process::getppid() != Some(proxy) {
            let (gone, seen) = tokio::sync::oneshot::channel();
            let _ = gone.send(());
            return ProxyWatch(Some(seen));
        }
        ProxyWatch(Some(seen))
    }

    fn by_signal() -> ProxyWatch {
        // The signal comes when the thread that started the warden ends;
        // the proxy starts it from its runtime's main thread.
        if let Err(error) = rustix::process::set_parent_process_death_signal(Some(Signal::HUP)) {
            say!(
                "elicit proxy: warning: cannot watch the proxy ({error}); a killed proxy may leave its server running"
            );
        }
        ProxyWatch(None)
    }

    /// Resolves once the proxy has exited.
    async fn gone(&mut self) {
        match &mut self.0 {
            Some(seen) => {
                let _ = seen.await;
            }
            None => std::future::pending().await,
        }
    }
}

/// Blocks until `fd` is readable (or `poll` fails for good).
fn wait_readable(fd: &OwnedFd) {
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        match rustix::event::poll(&mut fds, None) {
            Err(Errno::INTR) => {}
            _ => return,
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_round_trip_through_the_command_line() {
        let args = arguments(
            Duration::from_millis(250),
            &["sh".into(), "-c".into(), "x y".into()],
        );
        assert_eq!(args[0], ARG);
        let orders = Orders::parse(args.into_iter().skip(1)).expect("parses");
        assert_eq!(orders.grace, Duration::from_millis(250));
        assert_eq!(orders.proxy.as_raw_nonzero().get() as u32, std::process::id());
        assert_eq!(
            orders.command,
            vec![OsString::from("sh"), "-c".into(), "x y".into()]
        );
        assert!(Orders::parse(["5".into(), "1".into(), "--".into()].into_iter()).is_none());
        assert!(Orders::parse(["x".into()].into_iter()).is_none());
    }

    #[test]
    fn the_exit_code_is_the_servers() {
        assert_eq!(exit_code(Some(3), None), 3);
        assert_eq!(exit_code(None, Some(9)), 137);
        assert_eq!(exit_code(None, Some(15)), 143);
        assert_eq!(exit_code(None, None), EXIT_FAILED);
    }
}
