//! The broker proving itself to clients and front-ends after a restart,
//! and clients proving themselves to it.
//!
//! A session's resume token crosses the bus once, in the reply to
//! `OpenSession`; a front-end's registration secret once, in the reply to
//! `OpenFrontend`. After that each side shows it knows the secret with an
//! HMAC over the other side's fresh nonce ([`elicit_proto::trust`]), so a
//! program that grabs the broker's name after a crash learns nothing and
//! cannot pass for the broker.

use elicit_proto::Error;
use elicit_proto::trust::{self, NONCE_BYTES, Role};
use rand::Rng;

use super::{CallId, Caller, Core, Reply};

fn check_nonce(nonce: &[u8]) -> Result<(), Error> {
    if (16..=NONCE_BYTES * 2).contains(&nonce.len()) {
        Ok(())
    } else {
        Err(Error::BadArgument(format!(
            "a nonce must be 16 to {} bytes, not {}",
            NONCE_BYTES * 2,
            nonce.len()
        )))
    }
}

impl Core {
    fn resume_token(&self, session: &str) -> Result<String, Error> {
        self.state
            .session(session)
            .map(|s| s.record.resume_token.clone())
            .ok_or_else(|| Error::NotFound(format!("no session {session}")))
    }

    /// `ProveSession`: proves the broker knows `session`'s resume token
    /// (an HMAC over the caller's `nonce`), and hands the caller a
    /// challenge to prove the same in `ResumeProven`.
    pub(super) fn prove_session(
        &mut self,
        caller: &Caller,
        session: &str,
        nonce: &[u8],
    ) -> Result<Option<Reply>, Error> {
        check_nonce(nonce)?;
        let token = self.resume_token(session)?;
        let proof = trust::proof(&token, Role::BrokerToClient, session, &self.own_name, nonce);
        let mut challenge = vec![0u8; NONCE_BYTES];
        self.rng.fill(challenge.as_mut_slice());
        self.challenges
            .insert((caller.name.clone(), session.to_owned()), challenge.clone());
        Ok(Some(Reply::Challenge { proof, challenge }))
    }

    /// `ResumeProven`: re-attaches `caller` to `session` once it has
    /// answered the challenge of its last `ProveSession` for it.
    pub(super) fn resume_proven(
        &mut self,
        now: u64,
        call: CallId,
        caller: &Caller,
        session: &str,
        proof: &[u8],
    ) -> Result<Option<Reply>, Error> {
        self.idle.touch(now);
        let Some(challenge) = self.challenges.remove(&(caller.name.clone(), session.to_owned())) else {
            return Err(Error::AccessDenied(format!(
                "no challenge is open for session {session}: call ProveSession first"
            )));
        };
        let token = self.resume_token(session)?;
        if !trust::verify(
            &token,
            Role::ClientToBroker,
            session,
            &caller.name,
            &challenge,
            proof,
        ) {
            tracing::warn!(%session, caller = %caller.name, "refused a resume with a wrong proof");
            return Err(Error::AccessDenied(format!("wrong proof for session {session}")));
        }
        self.take_over(call, caller, session)
    }

    /// `ProveFrontend`: proves the broker knows registration `id`'s secret.
    pub(super) fn prove_frontend(
        &self,
        caller: &Caller,
        id: &str,
        nonce: &[u8],
    ) -> Result<Option<Reply>, Error> {
        caller.unsandboxed("register as a front-end")?;
        check_nonce(nonce)?;
        let registration = self
            .registrations
            .get(id)
            .ok_or_else(|| Error::NotFound(format!("no front-end registration {id}")))?;
        let proof = trust::proof(
            &registration.secret,
            Role::BrokerToFrontend,
            id,
            &self.own_name,
            nonce,
        );
        Ok(Some(Reply::Proof(proof)))
    }
}
