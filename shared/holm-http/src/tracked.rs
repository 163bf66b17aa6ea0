//! A byte stream that carries something along and is told what it reads:
//! a served connection holding its slot in the connection limit, or a
//! forwarded WebSocket counting the client's bytes (holmd's activity
//! check). One wrapper, so the `AsyncRead`/`AsyncWrite` delegation is
//! written once.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What a [`Tracked`] stream holds, told the size of each read.
pub trait OnRead {
    /// `n` bytes were read.
    fn read(&self, n: usize);
}

/// Held for as long as the stream lives (a connection limit's permit).
impl OnRead for tokio::sync::OwnedSemaphorePermit {
    fn read(&self, _: usize) {}
}

/// Counts the bytes read.
impl OnRead for Arc<AtomicU64> {
    fn read(&self, n: usize) {
        self.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// `inner`, with `held` told of every read and dropped with it.
#[derive(Debug)]
pub struct Tracked<S, H> {
    inner: S,
    held: H,
}

impl<S, H> Tracked<S, H> {
    /// Wraps `inner`.
    pub fn new(inner: S, held: H) -> Self {
        Self { inner, held }
    }
}

impl<S: AsyncRead + Unpin, H: OnRead + Unpin> AsyncRead for Tracked<S, H> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.held.read(buf.filled().len() - before);
        r
    }
}

impl<S: AsyncWrite + Unpin, H: Unpin> AsyncWrite for Tracked<S, H> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn reads_are_counted_and_writes_pass() {
        let (a, mut b) = tokio::io::duplex(64);
        let count = Arc::new(AtomicU64::new(0));
        let mut t = Tracked::new(a, Arc::clone(&count));
        b.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        t.read_exact(&mut buf).await.unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 5);
        t.write_all(b"back").await.unwrap();
        let mut got = [0u8; 4];
        b.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"back");
        assert_eq!(count.load(Ordering::Relaxed), 5, "writes are not counted");
    }
}
