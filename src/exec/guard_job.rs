//! Windows: what ties the TX guard process to `rxnode run`
//! (docs/safety.md#the-tx-guard-process). Windows has no `PR_SET_PDEATHSIG`:
//! `run` puts the guard in a Job object whose only handle it holds, with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, so however `run` ends (Task Manager,
//! `TerminateProcess`, a crash) Windows closes that handle and kills the guard,
//! which closes the device. The guard reads its parent's process ID from a
//! process snapshot, for the grant's parent check.
use std::os::windows::io::AsRawHandle;
use std::process::Child;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::GetCurrentProcessId;

/// A Job object that kills its processes when its last handle closes: when
/// this value drops, or when the process holding it ends in any way.
pub(crate) struct KillOnClose(HANDLE);

// SAFETY: a Job object handle may be used and closed from any thread.
unsafe impl Send for KillOnClose {}

impl Drop for KillOnClose {
    fn drop(&mut self) {
        // SAFETY: the handle came from CreateJobObjectW and is closed once, here.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// Put `child` in a new kill-on-close Job object. Its handle is not
/// inheritable, so only this process holds it.
pub(crate) fn kill_with_me(child: &Child) -> std::io::Result<KillOnClose> {
    // SAFETY: no security attributes (not inheritable), no name.
    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if job.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let job = KillOnClose(job);
    let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: `info` is a JOBOBJECT_EXTENDED_LIMIT_INFORMATION of the size given.
    let ok = unsafe {
        SetInformationJobObject(
            job.0,
            JobObjectExtendedLimitInformation,
            std::ptr::from_ref(&info).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles are open; the child's stays owned by `child`.
    if unsafe { AssignProcessToJobObject(job.0, child.as_raw_handle()) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(job)
}

/// This process's parent's process ID, from a process snapshot (0 when it
/// cannot be read: no grant verifies for parent 0).
pub(crate) fn parent_pid() -> u32 {
    // SAFETY: a snapshot of all processes; closed below.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snap == INVALID_HANDLE_VALUE || snap.is_null() {
        return 0;
    }
    // SAFETY: no preconditions.
    let me = unsafe { GetCurrentProcessId() };
    let mut entry = PROCESSENTRY32W {
        dwSize: std::mem::size_of::<PROCESSENTRY32W>() as u32,
        ..PROCESSENTRY32W::default()
    };
    let mut parent = 0;
    // SAFETY: `entry.dwSize` is set as the API requires; the snapshot is open.
    let mut more = unsafe { Process32FirstW(snap, &mut entry) } != 0;
    while more {
        if entry.th32ProcessID == me {
            parent = entry.th32ParentProcessID;
            break;
        }
        // SAFETY: as above.
        more = unsafe { Process32NextW(snap, &mut entry) } != 0;
    }
    // SAFETY: the snapshot handle is closed once.
    unsafe {
        CloseHandle(snap);
    }
    parent
}
