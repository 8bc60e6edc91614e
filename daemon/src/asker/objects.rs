//! The objects an asker-socket peer sees: the asking half of `Broker1`,
//! and `Session1` and `Request1` for what it opened. Each call goes to the
//! broker over the peer's bus connection; nothing else is served.

use std::sync::Arc;

use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, Dict, Request1Proxy, Session1Proxy};
use zbus::ObjectServer;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

use super::relay::Upstream;

/// `dev.elicitd.Broker1`, the methods that open or resume a session only.
#[derive(Debug)]
pub(super) struct AskerBroker {
    upstream: Arc<Upstream>,
}

impl AskerBroker {
    pub(super) fn new(upstream: Arc<Upstream>) -> Self {
        AskerBroker { upstream }
    }

    async fn broker(&self) -> Result<Broker1Proxy<'static>, Error> {
        Ok(Broker1Proxy::new(&self.upstream.conn).await?)
    }

    /// Serves `Session1` at `path` for the peer, unless it is served already.
    async fn serve_session(&self, server: &ObjectServer, path: &OwnedObjectPath) -> Result<(), Error> {
        let session = AskerSession {
            upstream: self.upstream.clone(),
            path: path.clone(),
        };
        server.at(path.as_ref(), session).await?;
        Ok(())
    }
}

#[zbus::interface(name = "dev.elicitd.Broker1")]
impl AskerBroker {
    /// Opens a session whose origin is marked `remote`, whatever the peer
    /// says. What a proxy verified on another machine proves nothing here,
    /// so a remote peer cannot claim a local executable that rules trust.
    async fn open_session(
        &self,
        mut origin: Dict,
        #[zbus(object_server)] server: &ObjectServer,
    ) -> Result<(OwnedObjectPath, String), Error> {
        origin.insert("remote".into(), OwnedValue::from(true));
        origin.remove("verified-exe");
        origin.remove("verified-args");
        let (path, token) = self
            .broker()
            .await?
            .open_session(origin)
            .await
            .map_err(Error::from)?;
        self.serve_session(server, &path).await?;
        Ok((path, token))
    }

    /// Re-attaches the peer to a session it opened earlier.
    async fn resume_session(
        &self,
        resume_token: &str,
        #[zbus(object_server)] server: &ObjectServer,
    ) -> Result<OwnedObjectPath, Error> {
        let path = self
            .broker()
            .await?
            .resume_session(resume_token)
            .await
            .map_err(Error::from)?;
        self.serve_session(server, &path).await?;
        Ok(path)
    }
}

/// `dev.elicitd.Session1` of one session the peer opened.
#[derive(Debug)]
struct AskerSession {
    upstream: Arc<Upstream>,
    path: OwnedObjectPath,
}

impl AskerSession {
    async fn session(&self) -> Result<Session1Proxy<'static>, Error> {
        Ok(Session1Proxy::builder(&self.upstream.conn)
            .path(self.path.clone())?
            .build()
            .await?)
    }
}

#[zbus::interface(name = "dev.elicitd.Session1")]
impl AskerSession {
    /// Queues a form; its request object is served to the peer too.
    async fn elicit(
        &self,
        request_json: &str,
        options: Dict,
        #[zbus(object_server)] server: &ObjectServer,
    ) -> Result<OwnedObjectPath, Error> {
        let path = self
            .session()
            .await?
            .elicit(request_json, options)
            .await
            .map_err(Error::from)?;
        let request = AskerRequest {
            upstream: self.upstream.clone(),
            path: path.clone(),
        };
        server.at(path.as_ref(), request).await?;
        Ok(path)
    }

    /// Emits `Response` again for every answered, undelivered form.
    async fn redeliver(&self) -> Result<(), Error> {
        self.session().await?.redeliver().await.map_err(Error::from)
    }

    /// Closes the session and cancels its forms.
    async fn close(&self) -> Result<(), Error> {
        self.session().await?.close().await.map_err(Error::from)
    }
}

/// `dev.elicitd.Request1` of one form the peer submitted.
#[derive(Debug)]
struct AskerRequest {
    upstream: Arc<Upstream>,
    path: OwnedObjectPath,
}

impl AskerRequest {
    async fn request(&self) -> Result<Request1Proxy<'static>, Error> {
        Ok(Request1Proxy::builder(&self.upstream.conn)
            .path(self.path.clone())?
            .build()
            .await?)
    }

    /// The peer is done with this form: stop serving its object.
    async fn forget(&self, server: &ObjectServer) {
        let _ = server.remove::<AskerRequest, _>(self.path.as_ref()).await;
    }
}

#[zbus::interface(name = "dev.elicitd.Request1")]
impl AskerRequest {
    /// The peer has the outcome.
    async fn acknowledge(&self, #[zbus(object_server)] server: &ObjectServer) -> Result<(), Error> {
        self.request().await?.acknowledge().await.map_err(Error::from)?;
        self.forget(server).await;
        Ok(())
    }

    /// Withdraws the form.
    async fn close(&self, #[zbus(object_server)] server: &ObjectServer) -> Result<(), Error> {
        self.request().await?.close().await.map_err(Error::from)?;
        self.forget(server).await;
        Ok(())
    }
}
