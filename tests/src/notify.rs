//! `elicit-notify` as the tests run it: on a private bus, its log in the
//! bus's folder, registered before the test goes on.

use std::path::PathBuf;
use std::process::Stdio;

use elicit_proto::dbus::Broker1Proxy;

use crate::{PrivateBus, binary, eventually};

/// Starts `elicit-notify` on `bus` with `env` added, and waits until it
/// has registered; the child (killed on drop) and its log file.
pub async fn start(bus: &PrivateBus, env: Vec<(&str, String)>) -> (tokio::process::Child, PathBuf) {
    let log = bus.dir().join("notify.log");
    let child = tokio::process::Command::new(binary("elicit-notify"))
        .arg("--bus")
        .arg(bus.address())
        .envs(env)
        .stdin(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .kill_on_drop(true)
        .spawn()
        .expect("elicit-notify starts");
    let conn = bus.connect().await;
    let broker = Broker1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy");
    eventually("elicit-notify to register", || async {
        broker.frontends().await.unwrap_or(0) >= 1
    })
    .await;
    (child, log)
}
