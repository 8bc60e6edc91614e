//! What every front-end's `main` does before and after its own work.

use std::fmt::Display;
use std::future::Future;
use std::process::ExitCode;

use zbus::Connection;

/// Connects to `address`, or to the session bus
/// (`DBUS_SESSION_BUS_ADDRESS`) without one (the front-ends' `--bus`),
/// serving `iface` at `path` from the first message on.
pub(crate) async fn connect_serving(
    address: Option<&str>,
    path: &str,
    iface: impl zbus::object_server::Interface,
) -> zbus::Result<Connection> {
    let builder = match address {
        Some(address) => zbus::connection::Builder::address(address)?,
        None => zbus::connection::Builder::session()?,
    };
    builder.serve_at(path, iface)?.build().await
}

/// A tokio runtime of `workers` threads; a failure is said on standard
/// error in `program`'s name, and the caller ends with a failure status.
pub fn runtime(program: &str, workers: usize) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            eprintln!("{program}: cannot start: {error}");
            None
        }
    }
}

/// Runs `run` on a runtime of `workers` threads: the exit status is a
/// success when it ends well, else its error is said on standard error in
/// `program`'s name.
pub fn block_on<E: Display>(
    program: &str,
    workers: usize,
    run: impl Future<Output = Result<(), E>>,
) -> ExitCode {
    let Some(runtime) = runtime(program, workers) else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{program}: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Idle;

    #[zbus::interface(name = "dev.elicitd.Test1")]
    impl Idle {}

    #[tokio::test]
    async fn a_bad_address_is_an_error_not_a_panic() {
        assert!(
            connect_serving(Some("not a D-Bus address"), "/", Idle)
                .await
                .is_err()
        );
    }

    #[test]
    fn the_exit_status_follows_the_outcome() {
        let ok = block_on("test", 1, async { Ok::<(), String>(()) });
        let failed = block_on("test", 1, async { Err::<(), String>("no bus".into()) });
        assert_eq!((ok, failed), (ExitCode::SUCCESS, ExitCode::FAILURE));
    }
}
