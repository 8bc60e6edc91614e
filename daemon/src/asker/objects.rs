//! The objects an asker-socket peer sees: the asking half of `Broker1`,
//! and `Session1` and `Request1` for what it opened. Each call goes to the
//! broker over the peer's bus connection; nothing else is served.

use elicit_proto::Error;
use elicit_proto::dbus::{Broker1Proxy, Dict, Request1Proxy, Session1Proxy};
use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};
use zbus::{Connection, ObjectServer};

/// `dev.elicitd.Broker1`, the methods that open or resume a session only.
#[derive(Debug)]
pub(super) struct AskerBroker {
    /// The peer's own connection to the broker's bus; when it closes, the
    /// broker sees an owner leave, as with any client.
    upstream: Connection,
    broker: Broker1Proxy<'static>,
}

impl AskerBroker {
    /// The objects a peer reaches over `upstream`. Every proxy here is
    /// built once and without a property cache, which would cost a GetAll
    /// and an AddMatch each.
    pub(super) async fn new(upstream: Connection) -> zbus::Result<Self> {
        let broker = Broker1Proxy::builder(&upstream)
            .cache_properties(CacheProperties::No)
            .build()
            .await?;
        Ok(AskerBroker { upstream, broker })
    }

    /// Serves `Session1` at `path` for the peer, unless it is served already.
    async fn serve_session(&self, server: &ObjectServer, path: &OwnedObjectPath) -> Result<(), Error> {
        let session = AskerSession {
            upstream: self.upstream.clone(),
            session: Session1Proxy::builder(&self.upstream)
                .path(path.clone())?
                .cache_properties(CacheProperties::No)
                .build()
                .await?,
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
        // Refused here, before a byte of it is passed on.
        use elicit_proto::dbus::OriginDict;
        elicit_proto::dbus::Origin::from_dict(&origin)
            .check_sizes()
            .map_err(Error::LimitExceeded)?;
        origin.insert("remote".into(), OwnedValue::from(true));
        origin.remove("verified-exe");
        origin.remove("verified-args");
        let (path, token) = self.broker.open_session(origin).await?;
        self.serve_session(server, &path).await?;
        Ok((path, token))
    }

    /// Re-attaches the peer to a session it opened earlier.
    async fn resume_session(
        &self,
        resume_token: &str,
        #[zbus(object_server)] server: &ObjectServer,
    ) -> Result<OwnedObjectPath, Error> {
        let path = self.broker.resume_session(resume_token).await?;
        self.serve_session(server, &path).await?;
        Ok(path)
    }
}

/// `dev.elicitd.Session1` of one session the peer opened.
#[derive(Debug)]
struct AskerSession {
    upstream: Connection,
    session: Session1Proxy<'static>,
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
        let path = self.session.elicit(request_json, options).await?;
        let request = AskerRequest {
            path: path.clone(),
            request: Request1Proxy::builder(&self.upstream)
                .path(path.clone())?
                .cache_properties(CacheProperties::No)
                .build()
                .await?,
        };
        server.at(path.as_ref(), request).await?;
        Ok(path)
    }

    /// Emits `Response` again for every answered, undelivered form.
    async fn redeliver(&self) -> Result<(), Error> {
        Ok(self.session.redeliver().await?)
    }

    /// Closes the session and cancels its forms.
    async fn close(&self) -> Result<(), Error> {
        Ok(self.session.close().await?)
    }
}

/// `dev.elicitd.Request1` of one form the peer submitted.
#[derive(Debug)]
struct AskerRequest {
    path: OwnedObjectPath,
    request: Request1Proxy<'static>,
}

impl AskerRequest {
    /// The peer is done with this form: stop serving its object.
    async fn forget(&self, server: &ObjectServer) {
        let _ = server.remove::<AskerRequest, _>(self.path.as_ref()).await;
    }
}

#[zbus::interface(name = "dev.elicitd.Request1")]
impl AskerRequest {
    /// The peer has the outcome.
    async fn acknowledge(&self, #[zbus(object_server)] server: &ObjectServer) -> Result<(), Error> {
        self.request.acknowledge().await?;
        self.forget(server).await;
        Ok(())
    }

    /// Withdraws the form.
    async fn close(&self, #[zbus(object_server)] server: &ObjectServer) -> Result<(), Error> {
        self.request.close().await?;
        self.forget(server).await;
        Ok(())
    }
}
