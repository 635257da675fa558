//! What a release binary is, read from its bytes (the `object` crate), and
//! the check that it is what its target claims: format and architecture;
//! for glibc builds the newest glibc symbol version it needs and the
//! libraries it loads; for musl no dynamic section; for macOS the minimum
//! OS version; for Windows the DLLs it imports; and its size.

use object::elf;
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::read::macho::{LoadCommandVariant, MachOFile64};
use object::{Architecture, Endianness, Object};

use super::targets::{Arch, Format, Target};

/// What was read from one binary.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// `elf`, `mach-o` or `pe`.
    pub format: &'static str,
    pub architecture: String,
    pub bytes: u64,
    /// ELF: a PT_DYNAMIC or PT_INTERP header.
    pub dynamic: bool,
    /// ELF: DT_NEEDED libraries; PE: imported DLLs (lower case).
    pub libraries: Vec<String>,
    /// ELF: the newest `GLIBC_2.N` the binary needs (N).
    pub newest_glibc: Option<u32>,
    /// Mach-O: LC_BUILD_VERSION's (or LC_VERSION_MIN_MACOSX's) minimum OS.
    pub min_os: Option<(u32, u32)>,
}

/// The libraries a manylinux2014 binary may load (PEP 599), besides the
/// dynamic loader.
const MANYLINUX_LIBRARIES: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libgcc_s.so.1",
    "libutil.so.1",
];

/// DLLs every Windows has; anything else (libgcc_s_seh-1.dll,
/// libwinpthread-1.dll) would be missing on a user's machine.
fn system_dll(name: &str) -> bool {
    name.starts_with("api-ms-win-")
        || [
            "kernel32.dll",
            "ntdll.dll",
            "advapi32.dll",
            "ws2_32.dll",
            "userenv.dll",
            "bcrypt.dll",
            "bcryptprimitives.dll",
            "msvcrt.dll",
            "ucrtbase.dll",
            "secur32.dll",
            "crypt32.dll",
            "ole32.dll",
            "oleaut32.dll",
            "shell32.dll",
            "user32.dll",
            "iphlpapi.dll",
            "synchronization.dll",
            "mswsock.dll",
        ]
        .contains(&name)
}

pub fn read(data: &[u8]) -> Result<Facts, String> {
    let file = object::File::parse(data).map_err(|e| format!("not an executable: {e}"))?;
    let mut facts = Facts {
        architecture: match file.architecture() {
            Architecture::X86_64 => "x86_64".into(),
            Architecture::Aarch64 => "aarch64".into(),
            other => format!("{other:?}"),
        },
        bytes: data.len() as u64,
        ..Facts::default()
    };
    match file {
        object::File::Elf64(_) => {
            facts.format = "elf";
            read_elf(data, &mut facts)?;
        }
        object::File::MachO64(_) => {
            facts.format = "mach-o";
            facts.min_os = macho_min_os(data)?;
        }
        object::File::Pe64(ref pe) => {
            facts.format = "pe";
            let mut dlls: Vec<String> = pe
                .imports()
                .map_err(|e| format!("PE imports: {e}"))?
                .map(|i| i.map(|i| String::from_utf8_lossy(i.library()).to_ascii_lowercase()))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("PE imports: {e}"))?;
            dlls.sort();
            dlls.dedup();
            facts.libraries = dlls;
        }
        _ => return Err("neither a 64-bit ELF, Mach-O nor PE file".into()),
    }
    Ok(facts)
}

fn read_elf(data: &[u8], facts: &mut Facts) -> Result<(), String> {
    let bad = |e: object::Error| format!("ELF: {e}");
    let file = ElfFile64::<Endianness>::parse(data).map_err(bad)?;
    let endian = file.endian();
    facts.dynamic = file
        .elf_program_headers()
        .iter()
        .any(|h| matches!(h.p_type(endian), elf::PT_DYNAMIC | elf::PT_INTERP));
    let sections = file.elf_header().sections(endian, data).map_err(bad)?;
    if let Some((entries, link)) = sections.dynamic(endian, data).map_err(bad)? {
        let strings = sections.strings(endian, data, link).map_err(bad)?;
        for entry in entries {
            if entry.d_tag.get(endian) == elf::DT_NEEDED {
                let offset = entry.d_val.get(endian) as u32;
                let name = strings.get(offset).map_err(|()| "ELF: bad DT_NEEDED")?;
                facts
                    .libraries
                    .push(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    if let Some((mut needs, link)) = sections.gnu_verneed(endian, data).map_err(bad)? {
        let strings = sections.strings(endian, data, link).map_err(bad)?;
        while let Some((_, mut versions)) = needs.next().map_err(bad)? {
            while let Some(version) = versions.next().map_err(bad)? {
                let name = version.name(endian, strings).map_err(bad)?;
                let minor = std::str::from_utf8(name)
                    .ok()
                    .and_then(|n| n.strip_prefix("GLIBC_2."))
                    .and_then(|n| n.split('.').next())
                    .and_then(|n| n.parse::<u32>().ok());
                if let Some(minor) = minor {
                    facts.newest_glibc = facts.newest_glibc.max(Some(minor));
                }
            }
        }
    }
    Ok(())
}

fn macho_min_os(data: &[u8]) -> Result<Option<(u32, u32)>, String> {
    let bad = |e: object::Error| format!("Mach-O: {e}");
    let file = MachOFile64::<Endianness>::parse(data).map_err(bad)?;
    let endian = file.endian();
    let mut commands = file.macho_load_commands().map_err(bad)?;
    while let Some(command) = commands.next().map_err(bad)? {
        let version = |v: object::macho::Version| (u32::from(v.major()), u32::from(v.minor()));
        match command.variant().map_err(bad)? {
            LoadCommandVariant::BuildVersion(build, _) => {
                return Ok(Some(version(build.minos.get(endian))))
            }
            LoadCommandVariant::VersionMin(min) => {
                return Ok(Some(version(min.version.get(endian))))
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Every way `facts` falls short of `target`'s claims (empty: it holds).
pub fn check(target: &Target, facts: &Facts) -> Vec<String> {
    let mut problems = Vec::new();
    let arch = match target.arch {
        Arch::X86_64 => "x86_64",
        Arch::Aarch64 => "aarch64",
    };
    if facts.architecture != arch {
        problems.push(format!("built for {}, not {arch}", facts.architecture));
    }
    let format = match target.format {
        Format::ElfGlibc { .. } | Format::ElfStatic => "elf",
        Format::MachO { .. } => "mach-o",
        Format::Pe => "pe",
    };
    if facts.format != format {
        problems.push(format!("a {} file, not {format}", facts.format));
    }
    match target.format {
        Format::ElfGlibc { max_glibc } => {
            match facts.newest_glibc {
                Some(minor) if minor <= max_glibc => {}
                Some(minor) => problems.push(format!(
                    "needs GLIBC_2.{minor}, newer than the 2.{max_glibc} it claims"
                )),
                None => problems.push("needs no glibc symbol version: not a glibc build".into()),
            }
            for library in &facts.libraries {
                if !MANYLINUX_LIBRARIES.contains(&library.as_str())
                    && !library.starts_with("ld-linux")
                {
                    problems.push(format!(
                        "loads {library}, which manylinux2014 does not allow"
                    ));
                }
            }
        }
        Format::ElfStatic => {
            if facts.dynamic || !facts.libraries.is_empty() {
                problems.push(format!(
                    "has a dynamic section or interpreter (loads {:?}): not static",
                    facts.libraries
                ));
            }
        }
        Format::MachO { min_os } => match facts.min_os {
            Some(found) if found == min_os => {}
            Some((major, minor)) => problems.push(format!(
                "needs macOS {major}.{minor}, but its wheel claims {}.{}",
                min_os.0, min_os.1
            )),
            None => problems.push("names no minimum macOS version".into()),
        },
        Format::Pe => {
            for dll in &facts.libraries {
                if !system_dll(dll) {
                    problems.push(format!("imports {dll}, which Windows does not ship"));
                }
            }
        }
    }
    if facts.bytes > target.max_bytes {
        problems.push(format!(
            "{} bytes, over the {} it should stay under",
            facts.bytes, target.max_bytes
        ));
    }
    problems
}

/// One line for the report: `elf x86_64, static, 14.1 MB`.
pub fn summary(facts: &Facts) -> String {
    let mut parts = vec![format!("{} {}", facts.format, facts.architecture)];
    if let Some(minor) = facts.newest_glibc {
        parts.push(format!("GLIBC_2.{minor} at most"));
    } else if facts.format == "elf" && !facts.dynamic {
        parts.push("static".into());
    }
    if let Some((major, minor)) = facts.min_os {
        parts.push(format!("macOS {major}.{minor}+"));
    }
    if facts.format == "pe" {
        parts.push(format!("imports {}", facts.libraries.join(" ")));
    }
    parts.push(format!("{:.1} MB", facts.bytes as f64 / 1e6));
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::targets::find;

    /// The xtask binary itself: a glibc x86-64 ELF on this machine.
    #[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
    #[test]
    fn reads_this_machines_own_executable() {
        let data = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let facts = read(&data).unwrap();
        assert_eq!(facts.format, "elf");
        assert_eq!(facts.architecture, std::env::consts::ARCH);
        assert!(facts.dynamic);
        assert!(
            facts.libraries.iter().any(|l| l == "libc.so.6"),
            "{facts:?}"
        );
        // Built by the host toolchain, not for glibc 2.17.
        assert!(facts.newest_glibc.unwrap() > 17, "{facts:?}");
        let target = find("x86_64-unknown-linux-gnu").unwrap();
        let problems = check(target, &facts);
        assert!(
            problems.iter().any(|p| p.contains("newer than the 2.17")),
            "{problems:?}"
        );
        // And it is no static musl binary.
        let musl = find("x86_64-unknown-linux-musl").unwrap();
        assert!(check(musl, &facts).iter().any(|p| p.contains("not static")));
    }

    #[test]
    fn refuses_what_is_no_executable() {
        assert!(read(b"#!/bin/sh\necho hello\n").is_err());
    }

    #[test]
    fn checks_each_claim() {
        let target = find("x86_64-pc-windows-gnu").unwrap();
        let facts = Facts {
            format: "pe",
            architecture: "x86_64".into(),
            bytes: 30 * 1024 * 1024,
            libraries: vec!["kernel32.dll".into(), "libwinpthread-1.dll".into()],
            ..Facts::default()
        };
        let problems = check(target, &facts);
        assert_eq!(problems.len(), 2, "{problems:?}");
        let mac = find("aarch64-apple-darwin").unwrap();
        let facts = Facts {
            format: "mach-o",
            architecture: "aarch64".into(),
            min_os: Some((14, 0)),
            ..Facts::default()
        };
        assert!(check(mac, &facts)[0].contains("needs macOS 14.0"));
    }
}
