//! A bound on the size of one incoming D-Bus message.
//!
//! zbus reads each message whole into memory before anyone can look at it,
//! up to the protocol's 128 MiB; `OpenSession` with four 15 MiB strings is
//! 60 MiB held, then copied again into the argument's values. This reader
//! wraps the socket: a message within the bound is read as zbus always
//! does; a larger one is never held. Its header is read, its body read
//! through and skipped ([`super::walk`]) noting the long strings, and
//! zbus is handed a small call to [`super::refused`] in its place, with the
//! same serial and sender, so that the caller gets an error naming the
//! fields instead of an answer. A signal or reply that large is dropped.

use std::os::fd::OwnedFd;
use std::pin::Pin;

use async_trait::async_trait;
use zbus::Message;
use zbus::conn::AuthMechanism;
use zbus::connection::socket::ReadHalf;
use zbus::fdo::ConnectionCredentials;
use zbus::zvariant::{Endian, OwnedValue, Value, serialized};

use super::walk::{Bytes, Report, walk_body};

/// The fixed part of a message's header.
const PRIMARY: usize = 16;

/// The protocol's largest message (zbus refuses more and so do we, by
/// closing the connection).
const MAX_MESSAGE: u64 = 1 << 27;

/// The header fields of a message read through (a real header is a few
/// hundred bytes).
const MAX_FIELDS: usize = 64 * 1024;

/// The read half of a socket whose messages are bounded to `cap` bytes.
#[derive(Debug)]
pub struct Bounded<R> {
    inner: R,
    cap: usize,
}

impl<R: ReadHalf> Bounded<R> {
    /// Wraps `inner`: messages over `cap` bytes are refused unread.
    pub fn new(inner: R, cap: usize) -> Self {
        Bounded { inner, cap }
    }
}

/// The sizes the primary header gives.
struct Primary {
    little: bool,
    kind: u8,
    flags: u8,
    body_len: u64,
    serial: u32,
    fields_len: usize,
}

impl Primary {
    fn read(bytes: &[u8]) -> zbus::Result<Primary> {
        let little = match bytes[0] {
            b'l' => true,
            b'B' => false,
            _ => return Err(zbus::Error::IncorrectEndian),
        };
        let word = |at: usize| {
            let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
            if little {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            }
        };
        Ok(Primary {
            little,
            kind: bytes[1],
            flags: bytes[2],
            body_len: u64::from(word(4)),
            serial: word(8),
            fields_len: word(12) as usize,
        })
    }

    /// Bytes from the end of the header fields to the body.
    fn padding(&self) -> usize {
        (8 - (PRIMARY + self.fields_len) % 8) % 8
    }

    fn total(&self) -> u64 {
        (PRIMARY + self.fields_len + self.padding()) as u64 + self.body_len
    }
}

/// Reads what the connection had buffered, then the socket; fds are
/// dropped (the daemon negotiates none).
struct Source<'a, R> {
    inner: &'a mut R,
    buffered: &'a mut Vec<u8>,
}

impl<R: ReadHalf> Source<'_, R> {
    async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.buffered.is_empty() {
            let n = buf.len().min(self.buffered.len());
            buf[..n].copy_from_slice(&self.buffered[..n]);
            self.buffered.drain(..n);
            return Ok(n);
        }
        self.inner.recvmsg(buf).await.map(|(n, _fds)| n)
    }

    async fn exact(&mut self, buf: &mut [u8]) -> zbus::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            let n = self.read(&mut buf[done..]).await?;
            if n == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
            done += n;
        }
        Ok(())
    }
}

impl<R: ReadHalf> Bytes for Source<'_, R> {
    fn read<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> Pin<Box<dyn std::future::Future<Output = std::io::Result<usize>> + Send + 'a>> {
        Box::pin(Source::read(self, buf))
    }
}

#[async_trait]
impl<R: ReadHalf> ReadHalf for Bounded<R> {
    async fn receive_message(
        &mut self,
        seq: u64,
        already_received_bytes: &mut Vec<u8>,
        already_received_fds: &mut Vec<OwnedFd>,
    ) -> zbus::Result<Message> {
        // The primary header, left in the buffer for zbus to read again.
        while already_received_bytes.len() < PRIMARY {
            let mut byte = [0; PRIMARY];
            let want = PRIMARY - already_received_bytes.len();
            let (n, _fds) = self.inner.recvmsg(&mut byte[..want]).await?;
            if n == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
            already_received_bytes.extend_from_slice(&byte[..n]);
        }
        let primary = Primary::read(&already_received_bytes[..PRIMARY])?;
        if primary.total() <= self.cap as u64 {
            return self
                .inner
                .receive_message(seq, already_received_bytes, already_received_fds)
                .await;
        }
        if primary.total() > MAX_MESSAGE || primary.fields_len > MAX_FIELDS {
            return Err(zbus::Error::ExcessData);
        }
        let mut head = already_received_bytes[..PRIMARY].to_vec();
        already_received_bytes.drain(..PRIMARY);
        let mut source = Source {
            inner: &mut self.inner,
            buffered: already_received_bytes,
        };
        let mut fields = vec![0; primary.fields_len + primary.padding()];
        source.exact(&mut fields).await?;
        head.extend_from_slice(&fields[..primary.fields_len]);
        let header = Fields::parse(&head, primary.little)?;
        let args = argument_names(header.member.as_deref());
        let report = walk_body(
            &mut source,
            primary.little,
            primary.body_len,
            &header.signature,
            args,
        )
        .await
        .map_err(|e| zbus::Error::Failure(e.to_string()))?;
        let reason = super::refused::reason(header.member.as_deref(), primary.total(), self.cap, &report);
        tracing::warn!(
            bytes = primary.total(),
            member = ?header.member,
            sender = ?header.sender,
            "refused a call too large to read: {reason}"
        );
        super::refused::stand_in(&header, &primary_parts(&primary), reason)
    }

    async fn recvmsg(&mut self, buf: &mut [u8]) -> std::io::Result<(usize, Vec<OwnedFd>)> {
        self.inner.recvmsg(buf).await
    }

    fn can_pass_unix_fd(&self) -> bool {
        // A message read through could not keep its fds in order; the
        // daemon needs none.
        false
    }

    async fn peer_credentials(&mut self) -> std::io::Result<ConnectionCredentials> {
        self.inner.peer_credentials().await
    }

    fn auth_mechanism(&self) -> AuthMechanism {
        self.inner.auth_mechanism()
    }
}

/// What the stand-in call keeps of the primary header.
pub(super) struct PrimaryParts {
    /// A method call (else a signal, reply or error, which is dropped).
    pub method_call: bool,
    /// The caller expects no reply.
    pub no_reply: bool,
    /// The serial the error must answer.
    pub serial: u32,
}

fn primary_parts(primary: &Primary) -> PrimaryParts {
    PrimaryParts {
        method_call: primary.kind == 1,
        no_reply: primary.flags & 0x1 != 0,
        serial: primary.serial,
    }
}

/// The header fields of a message read through.
#[derive(Debug, Default)]
pub(super) struct Fields {
    /// The object called.
    pub path: Option<String>,
    /// The method.
    pub member: Option<String>,
    /// Who called.
    pub sender: Option<String>,
    /// Whom it was for.
    pub destination: Option<String>,
    /// The body's signature.
    pub signature: String,
}

impl Fields {
    /// Parses `head`: the primary header and the header fields (an
    /// `a(yv)` at offset 12).
    fn parse(head: &[u8], little: bool) -> zbus::Result<Fields> {
        let endian = if little { Endian::Little } else { Endian::Big };
        let data = serialized::Data::new(&head[12..], serialized::Context::new_dbus(endian, 12));
        let (entries, _): (Vec<(u8, OwnedValue)>, _) = data.deserialize()?;
        let mut fields = Fields::default();
        for (code, value) in entries {
            let text = match &*value {
                Value::Str(s) => Some(s.to_string()),
                Value::ObjectPath(p) => Some(p.to_string()),
                Value::Signature(s) => Some(s.to_string()),
                _ => None,
            };
            match code {
                1 => fields.path = text,
                3 => fields.member = text,
                6 => fields.destination = text,
                7 => fields.sender = text,
                8 => fields.signature = text.unwrap_or_default(),
                _ => {}
            }
        }
        Ok(fields)
    }
}

/// The arguments of the methods that carry long strings, by name.
fn argument_names(member: Option<&str>) -> &'static [&'static str] {
    match member {
        Some("OpenSession") => &["origin"],
        Some("Elicit") => &["request_json", "options"],
        Some("Answer" | "AnswerWith") => &["form", "token", "action", "content_json", "options"],
        Some("RegisterFrontend" | "OpenFrontend") => &["path", "options"],
        Some("ResumeFrontend") => &["path", "options", "registration"],
        _ => &[],
    }
}

/// The longest strings of a report, for the log and the refusal.
pub(super) fn longest(report: &Report, n: usize) -> Vec<&(String, u64)> {
    let mut sorted: Vec<_> = report.iter().collect();
    sorted.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    sorted.truncate(n);
    sorted
}
