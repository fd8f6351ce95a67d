//! The raw system call under every child-side wrapper (a `syscall` instruction on x86_64, so
//! the shared thread-local `errno` is never touched; libc's `syscall` elsewhere), and [`call`],
//! which turns its `-errno` result into `Err(errno)`.

use std::ffi::CStr;

use libc::c_long;

use super::Errno;

#[cfg(not(target_arch = "x86_64"))]
fn last_errno() -> Errno {
    // SAFETY: `__errno_location` returns a valid pointer to the calling thread's errno. In the
    // vfork child it is the suspended parent thread's errno, which nothing else reads meanwhile.
    unsafe { *libc::__errno_location() }
}

/// A raw system call returning `-errno` on failure. The sandbox child runs concurrently with
/// the verifier thread that shares its memory (and its thread-local `errno`), so child-side
/// wrappers never touch `errno`.
#[cfg(target_arch = "x86_64")]
unsafe fn raw_syscall(number: c_long, arguments: [usize; 6]) -> isize {
    let result: isize;
    // SAFETY: the caller guarantees the arguments are valid for `number`; `syscall` clobbers
    // only rax (the result), rcx and r11.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => result,
            in("rdi") arguments[0],
            in("rsi") arguments[1],
            in("rdx") arguments[2],
            in("r10") arguments[3],
            in("r8") arguments[4],
            in("r9") arguments[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn raw_syscall(number: c_long, arguments: [usize; 6]) -> isize {
    // SAFETY: forwarded from the caller. Without the x86_64 path, errno is shared with the
    // suspended or waiting parent thread, which only reads it after its own calls.
    let result = unsafe {
        libc::syscall(
            number,
            arguments[0],
            arguments[1],
            arguments[2],
            arguments[3],
            arguments[4],
            arguments[5],
        )
    };
    if result < 0 {
        -(last_errno() as isize)
    } else {
        result as isize
    }
}

/// Runs a raw system call and turns `-errno` into `Err(errno)`.
///
/// # Safety
///
/// The arguments must be valid for system call `number`: every pointer points to memory that
/// stays live for the call and is large enough for what the kernel reads or writes there, and
/// the call must not break an invariant the rest of the process relies on (a descriptor it
/// closes or replaces is not used again by its owner). Each wrapper in `child` says why its call
/// meets this.
pub(super) unsafe fn call(number: c_long, arguments: [usize; 6]) -> Result<usize, Errno> {
    // SAFETY: forwarded from the caller, who guarantees the arguments are valid for `number`.
    let result = unsafe { raw_syscall(number, arguments) };
    if (-4095..0).contains(&result) {
        Err(-result as Errno)
    } else {
        Ok(result as usize)
    }
}

pub(super) fn pointer<T>(value: *const T) -> usize {
    value as usize
}

pub(super) fn optional_pointer(value: Option<&CStr>) -> usize {
    value.map_or(0, |value| pointer(value.as_ptr()))
}
