//! The pool's block: anonymous shared memory mapped once, before the
//! process forks, so the processes it forks count into the same block.
//! Never unmapped (it lives as long as the processes that share it).

use std::sync::atomic::{AtomicPtr, Ordering};

use super::block::Block;

/// The mapping; null until [`map`] succeeded. A plain static, not a
/// per-process value: a forked child keeps its parent's pointer, and the
/// mapping behind it is shared.
static POOL: AtomicPtr<Block> = AtomicPtr::new(std::ptr::null_mut());

/// Maps the pool's block, once: the block, or None when the system
/// refused the mapping.
pub(super) fn map() -> Option<&'static Block> {
    if let Some(block) = block() {
        return Some(block);
    }
    // SAFETY: an anonymous shared mapping of a fresh size, not tied to any
    // file; checked for failure below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<Block>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    // Anonymous mappings are zero-filled, and a zeroed block is a valid
    // empty one. Page-aligned, so aligned for the block.
    match POOL.compare_exchange(
        std::ptr::null_mut(),
        ptr.cast(),
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => block(),
        Err(_) => {
            // Mapped by another thread meanwhile: keep theirs.
            // SAFETY: ours, just mapped, never shared.
            unsafe { libc::munmap(ptr, std::mem::size_of::<Block>()) };
            block()
        }
    }
}

/// The pool's block, once mapped.
pub(super) fn block() -> Option<&'static Block> {
    // SAFETY: set once to a live mapping that is never unmapped.
    unsafe { POOL.load(Ordering::Acquire).as_ref() }
}
