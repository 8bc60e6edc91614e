//! The host's end: the proxy's own stdin and stdout.
//!
//! tokio's `stdin()`/`stdout()` do every read and write on its blocking
//! thread pool, which costs two thread hand-overs per line each way. An MCP
//! host almost always connects through pipes (or, from Node, socket pairs),
//! and both can be polled; so those are read and written directly from the
//! runtime, and only a terminal or a file falls back to tokio's blocking
//! versions.

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// Where the host's lines come from.
pub type HostInput = Box<dyn AsyncRead + Send + Unpin>;

/// Where lines for the host go.
pub type HostOutput = Box<dyn AsyncWrite + Send + Unpin>;

/// The proxy's stdin, polled directly when it is a pipe or a socket.
pub fn host_input() -> HostInput {
    let Ok(file) = duplicate(std::io::stdin().as_fd()) else {
        return Box::new(tokio::io::stdin());
    };
    if let Some(socket) = socket(&file) {
        return Box::new(socket);
    }
    match pipe::Receiver::from_file(file) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    }
}

/// How large the proxy asks its pipes to be. Linux's default of 64 KiB
/// makes a writer of a 100 kB result wait for the reader twice per line;
/// a pipe that holds a couple of results lets both sides work in whole
/// lines. Pipe buffers count against the user's `pipe-user-pages-soft`
/// (64 MiB), past which every new pipe of that user gets a single page, so
/// this stays modest: two pipes of 256 KiB per proxy, 128 proxies before
/// the limit.
pub const PIPE_BYTES: usize = 256 * 1024;

/// Asks for a [`PIPE_BYTES`] buffer on `fd` when it is a pipe; a refusal
/// (not a pipe, over the user's limit) leaves it as it was.
pub fn widen(fd: BorrowedFd<'_>) {
    let _ = rustix::pipe::fcntl_setpipe_size(fd, PIPE_BYTES);
}

/// The proxy's stdout, polled directly when it is a pipe of its own.
///
/// A non-blocking pipe is non-blocking for every descriptor sharing it; if
/// stderr is the same pipe (`2>&1`), the proxy's own warnings could then
/// fail with `EAGAIN`, so that case keeps tokio's blocking writer.
pub fn host_output() -> HostOutput {
    let stdout = std::io::stdout();
    if same_file(stdout.as_fd(), std::io::stderr().as_fd()) {
        return blocking_stdout();
    }
    let Ok(file) = duplicate(stdout.as_fd()) else {
        return blocking_stdout();
    };
    if let Some(socket) = socket(&file) {
        return Box::new(socket);
    }
    widen(file.as_fd());
    match pipe::Sender::from_file(file) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => blocking_stdout(),
    }
}

/// tokio's stdout, buffered: it writes one slice per call (each a trip
/// through the blocking pool), so the line and its newline are gathered
/// first and go out on flush.
fn blocking_stdout() -> HostOutput {
    Box::new(tokio::io::BufWriter::with_capacity(
        64 * 1024,
        tokio::io::stdout(),
    ))
}

/// `file` as a polled stream socket, when it is one.
fn socket(file: &File) -> Option<UnixStream> {
    if !file.metadata().ok()?.file_type().is_socket() {
        return None;
    }
    let socket = std::os::unix::net::UnixStream::from(file.as_fd().try_clone_to_owned().ok()?);
    socket.set_nonblocking(true).ok()?;
    UnixStream::from_std(socket).ok()
}

/// A `File` of its own for `fd`, so that dropping it leaves the standard
/// descriptor open.
fn duplicate(fd: BorrowedFd<'_>) -> std::io::Result<File> {
    Ok(File::from(fd.try_clone_to_owned()?))
}

/// True when `a` and `b` refer to the same file (or pipe).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    let meta = |fd: BorrowedFd<'_>| duplicate(fd).and_then(|file| file.metadata());
    match (meta(a), meta(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}
