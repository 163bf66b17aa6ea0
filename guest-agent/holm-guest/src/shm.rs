//! Shared memory a display server copies pixels into: a memfd mapped into
//! the guest, made once and reused for every capture (MIT-SHM on X11,
//! `wl_shm` on Wayland).

use std::os::fd::OwnedFd;
use std::ptr::NonNull;

use crate::display::DisplayError;

/// A memfd of a fixed size, mapped read-write and shared.
#[derive(Debug)]
pub struct SharedMemory {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone and is only read while
// its owner's mutex is held, so moving it to another thread is sound.
unsafe impl Send for SharedMemory {}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` are exactly what mmap returned, and no
        // slice into the mapping outlives the borrow of `self` that made it.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

impl SharedMemory {
    /// Makes a memfd of `len` bytes named `name` and maps it; answers the
    /// mapping and the descriptor to hand to the display server.
    pub fn create(name: &str, len: usize) -> Result<(Self, OwnedFd), DisplayError> {
        use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
        use rustix::mm::{MapFlags, ProtFlags, mmap};
        let fail =
            |what: &str, e: rustix::io::Errno| DisplayError::Failed(format!("shm {what}: {e}"));
        let fd = memfd_create(name, MemfdFlags::CLOEXEC).map_err(|e| fail("memfd", e))?;
        ftruncate(&fd, len as u64).map_err(|e| fail("ftruncate", e))?;
        // SAFETY: a fresh shared mapping of a file we own and just sized to
        // `len`; no other mapping of it exists in this process.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .map_err(|e| fail("mmap", e))?;
        let ptr = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| DisplayError::Failed("shm mmap: null".into()))?;
        Ok((Self { ptr, len }, fd))
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `n` bytes. The caller reads only after the server has
    /// answered the request that wrote them, so nothing writes meanwhile.
    pub fn bytes(&self, n: usize) -> &[u8] {
        let n = n.min(self.len);
        // SAFETY: the mapping is `len` bytes long and stays mapped while
        // `self` is borrowed; the server writes into it only between a
        // request of ours and its answer, which has come before this call.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), n) }
    }
}
