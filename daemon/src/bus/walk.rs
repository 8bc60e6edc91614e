//! Reading through the body of a D-Bus message too large to hold, without
//! holding it: every value is skipped as it arrives, and only the sizes of
//! its long strings are kept, with where they were (an argument's name, or
//! the key of the `a{sv}` entry they sit in), so that the refusal can name
//! the field. Memory is one small buffer whatever the message's size.

use std::future::Future;
use std::pin::Pin;

/// Where bytes come from: the socket, after whatever the reader had
/// buffered. Never asked for more than the message holds.
pub(super) trait Bytes: Send {
    /// Reads at least one byte into `buf` (at most `buf.len()`); 0 at the end.
    fn read<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> Pin<Box<dyn Future<Output = std::io::Result<usize>> + Send + 'a>>;
}

/// A string this long or longer is kept in the report.
const REPORTED: u64 = 256;

/// Locations kept in the report; a message cannot make it grow.
const MAX_REPORTED: usize = 16;

/// Nesting of containers and variants, as the D-Bus specification allows.
const MAX_DEPTH: usize = 64;

/// Bytes of a dict key that is read to name its value; a longer key is
/// itself reported.
const MAX_KEY: u64 = 256;

/// The message's body is not what its signature says.
#[derive(Debug, thiserror::Error)]
pub(super) enum WalkError {
    /// The socket failed or ended inside the body.
    #[error("reading the body: {0}")]
    Io(#[from] std::io::Error),
    /// The body does not follow its signature.
    #[error("malformed body: {0}")]
    Malformed(&'static str),
}

/// The long strings of a body: `(where, bytes)`, the bytes of repeated
/// strings at one place (the items of an array) summed.
pub(super) type Report = Vec<(String, u64)>;

/// Walks the body of `body_len` bytes with `signature` (little-endian
/// when `little`), naming top-level arguments by `args` (else `argument N`).
pub(super) async fn walk_body(
    source: &mut dyn Bytes,
    little: bool,
    body_len: u64,
    signature: &str,
    args: &[&str],
) -> Result<Report, WalkError> {
    let mut walker = Walker {
        source,
        buf: vec![0; 64 * 1024],
        start: 0,
        end: 0,
        pos: 0,
        remaining: body_len,
        little,
        report: Vec::new(),
    };
    let mut sig = signature.as_bytes();
    let mut index = 0;
    while !sig.is_empty() {
        let len = complete_type(sig)?;
        let name = args
            .get(index)
            .map_or_else(|| format!("argument {index}"), |a| (*a).to_owned());
        walker.value(&sig[..len], name, 0).await?;
        sig = &sig[len..];
        index += 1;
    }
    // Trailing bytes belong to no argument; they still must leave the socket.
    let rest = walker.remaining + (walker.end - walker.start) as u64;
    walker.skip(rest).await?;
    Ok(walker.report)
}

struct Walker<'s> {
    source: &'s mut dyn Bytes,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes of the body consumed: alignment is relative to the body's
    /// start, which is 8-aligned in the message.
    pos: u64,
    /// Bytes of the body not yet read from the source.
    remaining: u64,
    /// The message's byte order (both occur on the wire).
    little: bool,
    report: Report,
}

type Step<'a> = Pin<Box<dyn Future<Output = Result<(), WalkError>> + Send + 'a>>;

impl Walker<'_> {
    async fn fill(&mut self) -> Result<(), WalkError> {
        if self.start < self.end {
            return Ok(());
        }
        if self.remaining == 0 {
            return Err(WalkError::Malformed("a value runs past the end of the body"));
        }
        let want = self
            .buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        let n = self.source.read(&mut self.buf[..want]).await?;
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        self.start = 0;
        self.end = n;
        self.remaining -= n as u64;
        Ok(())
    }

    async fn skip(&mut self, mut n: u64) -> Result<(), WalkError> {
        while n > 0 {
            self.fill().await?;
            let take = ((self.end - self.start) as u64).min(n) as usize;
            self.start += take;
            self.pos += take as u64;
            n -= take as u64;
        }
        Ok(())
    }

    async fn bytes(&mut self, out: &mut [u8]) -> Result<(), WalkError> {
        let mut done = 0;
        while done < out.len() {
            self.fill().await?;
            let take = (self.end - self.start).min(out.len() - done);
            out[done..done + take].copy_from_slice(&self.buf[self.start..self.start + take]);
            self.start += take;
            self.pos += take as u64;
            done += take;
        }
        Ok(())
    }

    async fn align(&mut self, to: u64) -> Result<(), WalkError> {
        let pad = (to - self.pos % to) % to;
        self.skip(pad).await
    }

    async fn u32(&mut self) -> Result<u64, WalkError> {
        self.align(4).await?;
        let mut b = [0; 4];
        self.bytes(&mut b).await?;
        Ok(u64::from(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }))
    }

    fn note(&mut self, at: &str, len: u64) {
        if len < REPORTED {
            return;
        }
        if let Some(entry) = self.report.iter_mut().find(|(place, _)| place == at) {
            entry.1 += len;
        } else if self.report.len() < MAX_REPORTED {
            self.report.push((at.to_owned(), len));
        }
    }

    /// One value of the complete type `sig`, found at `at`.
    fn value<'a>(&'a mut self, sig: &'a [u8], at: String, depth: usize) -> Step<'a> {
        Box::pin(async move {
            if depth > MAX_DEPTH {
                return Err(WalkError::Malformed("nested too deeply"));
            }
            match sig.first().copied() {
                Some(b'y') => self.skip(1).await,
                Some(b'n' | b'q') => {
                    self.align(2).await?;
                    self.skip(2).await
                }
                Some(b'b' | b'i' | b'u' | b'h') => {
                    self.align(4).await?;
                    self.skip(4).await
                }
                Some(b'x' | b't' | b'd') => {
                    self.align(8).await?;
                    self.skip(8).await
                }
                Some(b's' | b'o') => {
                    let len = self.u32().await?;
                    self.note(&at, len);
                    self.skip(len + 1).await
                }
                Some(b'g') => {
                    let mut len = [0; 1];
                    self.bytes(&mut len).await?;
                    self.skip(u64::from(len[0]) + 1).await
                }
                Some(b'v') => {
                    let mut len = [0; 1];
                    self.bytes(&mut len).await?;
                    let mut inner = vec![0; usize::from(len[0])];
                    self.bytes(&mut inner).await?;
                    self.skip(1).await?;
                    if complete_type(&inner)? != inner.len() {
                        return Err(WalkError::Malformed("a variant holds other than one type"));
                    }
                    self.value(&inner, at, depth + 1).await
                }
                Some(b'a') => self.array(&sig[1..], at, depth).await,
                Some(b'(') => {
                    self.align(8).await?;
                    let mut members = &sig[1..sig.len() - 1];
                    while !members.is_empty() {
                        let len = complete_type(members)?;
                        self.value(&members[..len], at.clone(), depth + 1).await?;
                        members = &members[len..];
                    }
                    Ok(())
                }
                _ => Err(WalkError::Malformed("an unknown type in the signature")),
            }
        })
    }

    async fn array(&mut self, element: &[u8], at: String, depth: usize) -> Result<(), WalkError> {
        let len = self.u32().await?;
        self.align(alignment(element)).await?;
        let end = self.pos + len;
        if matches!(
            element.first(),
            Some(b'y' | b'n' | b'q' | b'b' | b'i' | b'u' | b'h' | b'x' | b't' | b'd')
        ) {
            return self.skip(len).await;
        }
        if let Some(b'{') = element.first() {
            let key_len = complete_type(&element[1..])?;
            let key = &element[1..1 + key_len];
            let value = &element[1 + key_len..element.len() - 1];
            while self.pos < end {
                self.align(8).await?;
                let name = if key == b"s" {
                    let n = self.u32().await?;
                    if n <= MAX_KEY {
                        let mut text = vec![0; n as usize];
                        self.bytes(&mut text).await?;
                        self.skip(1).await?;
                        String::from_utf8_lossy(&text).into_owned()
                    } else {
                        self.note(&format!("{at} (a key)"), n);
                        self.skip(n + 1).await?;
                        format!("a key of {n} bytes")
                    }
                } else {
                    self.value(key, at.clone(), depth + 1).await?;
                    at.clone()
                };
                self.value(value, name, depth + 1).await?;
            }
            return Ok(());
        }
        while self.pos < end {
            let before = self.pos;
            self.value(element, at.clone(), depth + 1).await?;
            if self.pos == before {
                return Err(WalkError::Malformed("an array of empty elements"));
            }
        }
        Ok(())
    }
}

/// The length of the first complete type of `sig`.
pub(super) fn complete_type(sig: &[u8]) -> Result<usize, WalkError> {
    let bad = WalkError::Malformed("a malformed signature");
    match sig.first() {
        None => Err(bad),
        Some(b'a') => Ok(1 + complete_type(&sig[1..])?),
        Some(open @ (b'(' | b'{')) => {
            let close = if *open == b'(' { b')' } else { b'}' };
            let mut at = 1;
            while sig.get(at) != Some(&close) {
                if at >= sig.len() {
                    return Err(bad);
                }
                at += complete_type(&sig[at..])?;
            }
            Ok(at + 1)
        }
        Some(_) => Ok(1),
    }
}

fn alignment(sig: &[u8]) -> u64 {
    match sig.first() {
        Some(b'n' | b'q') => 2,
        Some(b'b' | b'i' | b'u' | b'h' | b's' | b'o' | b'a') => 4,
        Some(b'x' | b't' | b'd' | b'(' | b'{') => 8,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use zbus::zvariant::{Endian, OwnedValue, Str, serialized::Context, to_bytes};

    /// A body in memory, handed out a few bytes at a time as a socket would.
    struct Slice(Vec<u8>, usize);

    impl Bytes for Slice {
        fn read<'a>(
            &'a mut self,
            buf: &'a mut [u8],
        ) -> Pin<Box<dyn Future<Output = std::io::Result<usize>> + Send + 'a>> {
            let n = buf.len().min(7).min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Box::pin(std::future::ready(Ok(n)))
        }
    }

    async fn report_of<T: serde::Serialize + zbus::zvariant::Type>(
        body: &T,
        endian: Endian,
        args: &[&str],
    ) -> Report {
        let bytes = to_bytes(Context::new_dbus(endian, 0), body).expect("serialise");
        let len = bytes.len() as u64;
        let signature = T::SIGNATURE.to_string();
        let signature = signature.trim_start_matches('(').trim_end_matches(')').to_owned();
        let mut source = Slice(bytes.to_vec(), 0);
        let report = walk_body(&mut source, endian == Endian::Little, len, &signature, args)
            .await
            .expect("walks");
        assert_eq!(source.1, source.0.len(), "the whole body was read");
        report
    }

    #[tokio::test]
    async fn long_strings_are_named_by_their_key_in_either_byte_order() {
        let mut origin: HashMap<String, OwnedValue> = HashMap::new();
        origin.insert("server".into(), OwnedValue::from(Str::from("s".repeat(300))));
        origin.insert("pid".into(), OwnedValue::from(7u32));
        origin.insert("host".into(), OwnedValue::from(Str::from("short")));
        let args: Vec<String> = vec!["a".repeat(400), "b".repeat(500)];
        origin.insert(
            "verified-args".into(),
            OwnedValue::try_from(zbus::zvariant::Value::from(args)).expect("array"),
        );
        for endian in [Endian::Little, Endian::Big] {
            let mut report = report_of(&(origin.clone(),), endian, &["origin"]).await;
            report.sort();
            assert_eq!(
                report,
                vec![("server".to_owned(), 300), ("verified-args".to_owned(), 900)]
            );
        }
        let report = report_of(
            &("r".repeat(1000), 5u32, "x".to_owned()),
            Endian::Little,
            &["request_json"],
        )
        .await;
        assert_eq!(report, vec![("request_json".to_owned(), 1000)]);
    }

    #[test]
    fn signatures_split_into_complete_types() {
        assert_eq!(complete_type(b"a{sv}s").ok(), Some(5));
        assert_eq!(complete_type(b"(sa(ii))u").ok(), Some(8));
        assert!(complete_type(b"(ss").is_err());
    }
}
