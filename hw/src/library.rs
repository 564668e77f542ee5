//! Is the SoapySDR library there?
//!
//! On unix `libSoapySDR` is linked at load time: if rxnode runs, it is there. On
//! Windows `rxnode.exe` delay-loads `SoapySDR.dll` (docs/hardware.md#windows): the
//! DLL is loaded at the first SoapySDR call, so every command that touches no radio
//! runs on a PC without SoapySDR. A missing DLL at that first call would abort the
//! process, so each entry point of this crate asks [`soapysdr_available`] first.
use crate::Error;

/// `Ok` when the SoapySDR library is loaded or can be; on Windows the error
/// names PothosSDR. Checked once per process.
pub fn soapysdr_available() -> Result<(), Error> {
    imp::available()
}

#[cfg(not(windows))]
mod imp {
    use crate::Error;

    pub(super) fn available() -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(windows)]
mod imp {
    use crate::Error;
    use std::sync::OnceLock;

    const DLL: &str = "SoapySDR.dll";

    pub(super) fn available() -> Result<(), Error> {
        static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
        LOADED
            .get_or_init(load)
            .clone()
            .map_err(|detail| Error::NoSoapySdr {
                library: DLL,
                detail,
            })
    }

    /// Loads the DLL the delay-load stubs will use (the same module: a second
    /// `LoadLibrary` of a loaded DLL returns its handle); kept loaded for the
    /// process's life.
    fn load() -> Result<(), String> {
        use windows_sys::Win32::System::LibraryLoader::LoadLibraryW;
        let wide: Vec<u16> = DLL.encode_utf16().chain(std::iter::once(0)).collect();
        // SAFETY: `wide` is a NUL-terminated UTF-16 string that outlives the call.
        let handle = unsafe { LoadLibraryW(wide.as_ptr()) };
        if handle.is_null() {
            Err(format!(
                "not found on PATH or beside rxnode.exe: {}",
                std::io::Error::last_os_error()
            ))
        } else {
            Ok(())
        }
    }
}
