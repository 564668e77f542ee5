//! Builds the bundled `rxsim` SoapySDR module (the C++ sources `hw/rxsim/*.cpp`, see
//! `hw/rxsim/rxsim.hpp`) into
//! `$OUT_DIR/librxsim.so` (`rxsim.dll` for Windows targets) and tells
//! `src/sim.rs` where it is (`RXSIM_MODULE`); `src/sim.rs` embeds its bytes.
//!
//! Needs a C++17 compiler and SoapySDR development files found through
//! `pkg-config SoapySDR` (Debian: `libsoapysdr-dev pkg-config g++`). For Windows
//! targets set `SOAPYSDR_CFLAGS`/`SOAPYSDR_LIBS` instead of pkg-config (MSVC:
//! from PothosSDR, e.g. `/IC:\PothosSDR\include` and
//! `C:\PothosSDR\lib\SoapySDR.lib`; mingw: see `scripts/check-windows.sh` and
//! docs/hardware.md#windows).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    // A folder: cargo watches every file under it (sources, headers, scenes).
    println!("cargo:rerun-if-changed=rxsim");
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["CXX", "PKG_CONFIG_PATH", "SOAPYSDR_CFLAGS", "SOAPYSDR_LIBS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let windows = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "windows");
    let target = out.join(if windows { "rxsim.dll" } else { "librxsim.so" });

    let sources = rxsim_sources();
    let flags = soapy_flags(windows);
    let compiler = cc::Build::new().cpp(true).get_compiler();
    let mut cmd = compiler.to_command();
    if compiler.is_like_msvc() {
        // cl.exe: a DLL (/LD) with C++ exceptions (/EHsc), optimized.
        cmd.args(["/nologo", "/std:c++17", "/O2", "/EHsc", "/W3", "/LD"]);
        cmd.args(&sources);
        cmd.arg(format!("/Fo{}\\", out.display()));
        cmd.arg(format!("/Fe{}", target.display()));
        // Compiler flags (include paths) before /link, libraries after.
        let (libs, cflags): (Vec<&String>, Vec<&String>) = flags
            .iter()
            .partition(|f| f.ends_with(".lib") || f.starts_with("/LIBPATH"));
        cmd.args(cflags);
        cmd.arg("/link");
        cmd.args(libs);
    } else {
        // -fno-trapping-math: rxsim never reads FP exception flags, and without it the
        // clamp of the CS16 conversion (std::min/max on floats) does not vectorize.
        cmd.args([
            "-std=c++17",
            "-O3",
            "-fno-trapping-math",
            "-shared",
            "-Wall",
            "-Wextra",
        ]);
        if windows {
            // mingw: the C++ and thread runtimes go inside the DLL, so it loads on a
            // PC that has no mingw runtime DLLs.
            cmd.arg("-static");
        } else {
            cmd.arg("-fPIC");
        }
        cmd.args(&sources).arg("-o").arg(&target);
        cmd.args(&flags);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler {:?}: {e}", compiler.path()));
    assert!(
        status.success(),
        "building the rxsim SoapySDR module failed ({status}); command: {cmd:?}"
    );
    println!("cargo:rustc-env=RXSIM_MODULE={}", target.display());
}

/// The module's translation units: every `.cpp` directly in `rxsim/`, sorted (headers
/// and the scenes under `rxsim/scenes/` are included by them).
fn rxsim_sources() -> Vec<PathBuf> {
    let dir = std::fs::read_dir("rxsim").unwrap_or_else(|e| panic!("cannot read hw/rxsim: {e}"));
    let mut sources: Vec<PathBuf> = dir
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("cannot read hw/rxsim: {e}"))
                .path()
        })
        .filter(|path| path.extension().is_some_and(|ext| ext == "cpp"))
        .collect();
    sources.sort();
    assert!(!sources.is_empty(), "no C++ sources in hw/rxsim");
    sources
}

/// Compiler and linker flags for SoapySDR.
fn soapy_flags(windows: bool) -> Vec<String> {
    if let (Ok(c), Ok(l)) = (env::var("SOAPYSDR_CFLAGS"), env::var("SOAPYSDR_LIBS")) {
        return c
            .split_whitespace()
            .chain(l.split_whitespace())
            .map(str::to_owned)
            .collect();
    }
    assert!(
        !windows,
        "building rxsim for Windows needs SOAPYSDR_CFLAGS and SOAPYSDR_LIBS (SoapySDR's \
         include folder and import library; see docs/hardware.md#windows)"
    );
    let output = Command::new("pkg-config")
        .args(["--cflags", "--libs", "SoapySDR"])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run pkg-config ({e}); install pkg-config and libsoapysdr-dev")
        });
    assert!(
        output.status.success(),
        "pkg-config --cflags --libs SoapySDR failed: {}; install libsoapysdr-dev",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}
