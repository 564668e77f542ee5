//! Windows: who owns a trust-root file and who else may read or write it (its
//! owner and DACL), how many names it has, whether it is a reparse point (a
//! symlink or a junction), and an owner-only DACL for the files rxnode creates.
//! The unix checks (owner uid, mode bits, link count, `O_NOFOLLOW`) read the
//! same facts there; docs/safety.md#windows says what each check covers.
use std::ffi::c_void;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, GetNamedSecurityInfoW, SetNamedSecurityInfoW, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    AddAccessAllowedAceEx, EqualSid, GetAce, GetLengthSid, GetTokenInformation, InitializeAcl,
    IsWellKnownSid, TokenUser, WinBuiltinAdministratorsSid, WinLocalSystemSid, ACE_HEADER, ACL,
    ACL_REVISION, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, INHERIT_ONLY_ACE,
    OBJECT_INHERIT_ACE, OWNER_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, PSID,
    TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

const ACCESS_ALLOWED_ACE_TYPE: u8 = 0;
const ACCESS_ALLOWED_CALLBACK_ACE_TYPE: u8 = 9;

/// What an ACE in a file's DACL does to who may open it.
#[derive(Debug, PartialEq, Eq)]
enum AceKind {
    /// Allows the SID after its mask, under a condition or not: ACCESS_ALLOWED (0)
    /// and ACCESS_ALLOWED_CALLBACK (9), read as header, mask, SID.
    Grants,
    /// Denies (1, 6, 10, 12), or does not decide access (audit, alarm and the
    /// SACL's label, attribute and policy ACEs: 2, 3, 7, 8, 13–19).
    TakesAway,
    /// Any other type: an allow ACE of another layout (4, 5, 11) or one still to come.
    Unread,
}

fn ace_kind(t: u8) -> AceKind {
    match t {
        ACCESS_ALLOWED_ACE_TYPE | ACCESS_ALLOWED_CALLBACK_ACE_TYPE => AceKind::Grants,
        1 | 6 | 10 | 12 | 2 | 3 | 7 | 8 | 13..=19 => AceKind::TakesAway,
        _ => AceKind::Unread,
    }
}
/// Rights that change a file or folder: write/append data (add file/subfolder),
/// extended attributes, delete a child, attributes, delete, change the DACL or
/// the owner, and the generic write/all bits.
const WRITE_RIGHTS: u32 =
    0x2 | 0x4 | 0x10 | 0x40 | 0x100 | 0x1_0000 | 0x4_0000 | 0x8_0000 | 0x4000_0000 | 0x1000_0000;
/// Rights that read a file's bytes: read data and the generic read/all bits.
const READ_RIGHTS: u32 = 0x1 | 0x8000_0000 | 0x1000_0000;
/// FILE_ALL_ACCESS.
const FULL_ACCESS: u32 = 0x1F_01FF;

/// Whether `md` (from `symlink_metadata`) is a reparse point: a symlink, a
/// junction or another redirection, never a plain file or folder.
pub(crate) fn is_reparse_point(md: &std::fs::Metadata) -> bool {
    md.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

/// What the owner and DACL of a file say.
#[derive(Debug)]
pub(crate) struct Access {
    /// The owner's SID (`S-1-5-21-…`) when it is not this user (nor SYSTEM or
    /// the Administrators group, who can take any file anyway).
    pub foreign_owner: Option<String>,
    /// SIDs other than this user, SYSTEM and Administrators allowed to write.
    pub other_writers: Vec<String>,
    /// SIDs other than this user, SYSTEM and Administrators allowed to read.
    pub other_readers: Vec<String>,
}

/// Owns a `LocalAlloc`ed pointer and frees it.
struct Local(*mut c_void);
impl Drop for Local {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from a Win32 call that documents LocalFree.
            unsafe { LocalFree(self.0) };
        }
    }
}

fn wide(p: &Path) -> Vec<u16> {
    p.as_os_str()
        .encode_wide()
        .chain(std::iter::once(0))
        .collect()
}

/// This process's user SID, as bytes (a copy that outlives the token).
fn current_user_sid() -> std::io::Result<Vec<u8>> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the pseudo-handle of this process needs no closing.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 256];
    let mut len = 0u32;
    // SAFETY: `buf` is writable for its length; `token` is open.
    let ok = unsafe {
        GetTokenInformation(
            token,
            TokenUser,
            buf.as_mut_ptr().cast(),
            buf.len() as u32,
            &mut len,
        )
    };
    let err = std::io::Error::last_os_error();
    // SAFETY: `token` was opened above and is closed once.
    unsafe { CloseHandle(token) };
    if ok == 0 {
        return Err(err);
    }
    // SAFETY: on success the buffer starts with a TOKEN_USER whose SID points into it.
    let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    // SAFETY: a valid SID from the token.
    let n = unsafe { GetLengthSid(sid) } as usize;
    // SAFETY: GetLengthSid gave the SID's size.
    Ok(unsafe { std::slice::from_raw_parts(sid.cast::<u8>(), n) }.to_vec())
}

fn sid_string(sid: PSID) -> String {
    let mut s: *mut u16 = std::ptr::null_mut();
    // SAFETY: a valid SID; the string is LocalAlloc'ed and freed by `Local`.
    if unsafe { ConvertSidToStringSidW(sid, &mut s) } == 0 || s.is_null() {
        return "an unreadable SID".to_owned();
    }
    let _free = Local(s.cast());
    // SAFETY: a NUL-terminated UTF-16 string from ConvertSidToStringSidW.
    let len = (0..).take_while(|&i| unsafe { *s.add(i) } != 0).count();
    // SAFETY: `len` u16s before the NUL.
    let sid = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(s, len) });
    // The groups a local file most often grants by inheritance, by name.
    match sid.as_str() {
        "S-1-1-0" => format!("Everyone ({sid})"),
        "S-1-5-11" => format!("Authenticated Users ({sid})"),
        "S-1-5-32-545" => format!("Users ({sid})"),
        "S-1-5-32-546" => format!("Guests ({sid})"),
        _ => sid,
    }
}

/// Whether `sid` is this user, SYSTEM or the Administrators group.
fn trusted(sid: PSID, me: &mut [u8]) -> bool {
    // SAFETY: both SIDs are valid for the calls.
    unsafe {
        EqualSid(sid, me.as_mut_ptr().cast()) != 0
            || IsWellKnownSid(sid, WinLocalSystemSid) != 0
            || IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
    }
}

/// The owner and the DACL of `path` (not following a final reparse point is the
/// caller's job: it refuses those before asking).
pub(crate) fn access(path: &Path) -> std::io::Result<Access> {
    let mut me = current_user_sid()?;
    let name = wide(path);
    let mut owner: PSID = std::ptr::null_mut();
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut sd: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the descriptor is freed by `Local`, and owner
    // and dacl point into it.
    let rc = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc as i32));
    }
    let _sd = Local(sd);
    let foreign_owner = (!owner.is_null() && !trusted(owner, &mut me)).then(|| sid_string(owner));
    let mut out = Access {
        foreign_owner,
        other_writers: vec![],
        other_readers: vec![],
    };
    if dacl.is_null() {
        // A NULL DACL grants everyone everything.
        out.other_writers.push("Everyone (no DACL)".to_owned());
        out.other_readers.push("Everyone (no DACL)".to_owned());
        return Ok(out);
    }
    // SAFETY: `dacl` is a valid ACL inside the descriptor.
    let count = unsafe { (*dacl).AceCount };
    for i in 0..u32::from(count) {
        let mut ace: *mut c_void = std::ptr::null_mut();
        // SAFETY: `i` < AceCount; the ACE points into the ACL.
        if unsafe { GetAce(dacl, i, &mut ace) } == 0 || ace.is_null() {
            continue;
        }
        // SAFETY: every ACE starts with an ACE_HEADER.
        let header = unsafe { *ace.cast::<ACE_HEADER>() };
        if u32::from(header.AceFlags) & INHERIT_ONLY_ACE != 0 {
            continue; // inherit-only ACEs do not apply here
        }
        match ace_kind(header.AceType) {
            AceKind::Grants => {}
            AceKind::TakesAway => continue,
            AceKind::Unread => {
                // An allow ACE rxnode does not read (compound, object, or of a
                // type still to come): counted as letting someone in.
                let who = format!("an ACE of type {} rxnode does not read", header.AceType);
                out.other_writers.push(who.clone());
                out.other_readers.push(who);
                continue;
            }
        }
        // ACCESS_ALLOWED_ACE and ACCESS_ALLOWED_CALLBACK_ACE (a conditional ACE,
        // counted whatever its condition): header, mask, then the SID.
        // SAFETY: the layout of these two ACE types.
        let (mask, sid) = unsafe {
            let mask = *ace.cast::<u8>().add(4).cast::<u32>();
            (mask, ace.cast::<u8>().add(8).cast::<c_void>())
        };
        if trusted(sid, &mut me) {
            continue;
        }
        if mask & WRITE_RIGHTS != 0 {
            out.other_writers.push(sid_string(sid));
        }
        if mask & READ_RIGHTS != 0 {
            out.other_readers.push(sid_string(sid));
        }
    }
    Ok(out)
}

/// How many names (hard links) the file has; opened without following a
/// reparse point.
pub(crate) fn link_count(path: &Path) -> std::io::Result<u32> {
    let f = std::fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)?;
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is valid.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: `f` is open for the call; `info` is writable.
    if unsafe { GetFileInformationByHandle(f.as_raw_handle(), &mut info) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(info.nNumberOfLinks)
}

/// Give `path` a protected DACL that allows this user alone (full access,
/// inherited by what a folder holds): the Windows form of mode 600 / 700.
pub(crate) fn set_owner_only(path: &Path, folder: bool) -> std::io::Result<()> {
    let mut me = current_user_sid()?;
    let sid: PSID = me.as_mut_ptr().cast();
    // ACL header (8) + one ACCESS_ALLOWED_ACE (8 + SID), rounded up to a DWORD.
    let size = (8 + 8 + me.len() + 3) & !3;
    let mut acl = vec![0u32; size / 4];
    let acl_ptr: *mut ACL = acl.as_mut_ptr().cast();
    let inherit = if folder {
        OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE
    } else {
        0
    };
    // SAFETY: `acl` is writable for `size` bytes and DWORD-aligned; `sid` is valid.
    unsafe {
        if InitializeAcl(acl_ptr, size as u32, ACL_REVISION) == 0
            || AddAccessAllowedAceEx(acl_ptr, ACL_REVISION, inherit, FULL_ACCESS, sid) == 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    let name = wide(path);
    // SAFETY: a valid path, SID and ACL for the call.
    let rc = unsafe {
        SetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            acl_ptr,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc as i32));
    }
    Ok(())
}

/// [`set_owner_only`], then read back: a file system or share that ignores
/// DACLs, or Wine (which keeps the unix mode and says the call succeeded), may
/// not keep it. An error names who may still open the file.
pub(crate) fn set_owner_only_checked(path: &Path) -> std::io::Result<()> {
    set_owner_only(path, false)?;
    let a = access(path)?;
    let mut others = a.other_writers;
    others.extend(a.other_readers);
    others.sort();
    others.dedup();
    if !others.is_empty() {
        return Err(std::io::Error::other(format!(
            "the owner-only DACL was set but did not hold: {} may still open it (a file \
             system or layer that ignores DACLs; under Wine the unix mode decides: umask 077)",
            others.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file given the owner-only DACL has this user alone on it, and a second
    /// name is counted (run under Wine by scripts/check-windows.sh).
    #[test]
    fn an_owner_only_file_is_this_users_alone_and_its_links_are_counted() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("key");
        std::fs::write(&p, b"x").unwrap();
        set_owner_only_checked(&p).unwrap();
        let a = access(&p).unwrap();
        assert!(
            a.foreign_owner.is_none() && a.other_writers.is_empty() && a.other_readers.is_empty(),
            "{a:?}"
        );
        assert_eq!(link_count(&p).unwrap(), 1);
        std::fs::hard_link(&p, d.path().join("second name")).unwrap();
        assert_eq!(link_count(&p).unwrap(), 2);
        assert!(!is_reparse_point(&std::fs::symlink_metadata(&p).unwrap()));
        let f = rxnode_dsp::open_regular_nofollow(&p).unwrap();
        drop(f);
    }

    /// An ACE that allows under a condition (a callback ACE) is read as allowing;
    /// an allow ACE of a layout rxnode does not read counts as letting others
    /// in; only deny and non-access ACEs are passed over.
    #[test]
    fn conditional_and_unread_allow_aces_are_not_passed_over() {
        assert_eq!(ace_kind(0), AceKind::Grants);
        assert_eq!(ace_kind(9), AceKind::Grants);
        for t in [1, 6, 10, 12, 2, 17] {
            assert_eq!(ace_kind(t), AceKind::TakesAway, "type {t}");
        }
        for t in [4, 5, 11, 20, 0xff] {
            assert_eq!(ace_kind(t), AceKind::Unread, "type {t}");
        }
    }
}
