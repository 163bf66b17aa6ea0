//! glibc malloc's settings for holmd (see docs/design/server.md, "holmd's
//! memory"), set first in `main`, before any thread starts: holmd's own
//! binary and `holm-bench`, which runs holmd in process.
//!
//! A screenshot burst through holmd allocates each image (the timeline's
//! copy, the body's chunks) on whichever worker or blocking thread serves
//! it. By default glibc gives each such thread an arena of its own (up to
//! eight per CPU), raises its mmap threshold as large blocks are freed
//! (so later large blocks come from the heap), and keeps what a burst
//! freed for the next allocation. Measured with `holm bench --scale`
//! (release): after one box's 10 s screenshot burst, then 10 boxes
//! started and idled, the process still held 150-200 MiB it had freed;
//! with these settings, 50 MiB (43 MiB before the burst).

/// The most arenas: two, for the two runtimes' threads that allocate most.
pub const ARENAS: i32 = 2;

/// Blocks from this size are mapped on their own and given back when
/// freed; set, it no longer rises with what is freed.
pub const MMAP_THRESHOLD: i32 = 64 << 10;

/// Free memory above this at the top of a heap is given back.
pub const TRIM_THRESHOLD: i32 = 128 << 10;

/// Sets [`ARENAS`], [`MMAP_THRESHOLD`] and [`TRIM_THRESHOLD`] in glibc's
/// malloc. Call it first in `main`; elsewhere (musl, another OS) it does
/// nothing.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets parameters of glibc's allocator, called
    // before this process starts another thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}
