//! Every platform the emulator ships for, and how each is built, named and
//! run: the one table the release binaries, the wheels, the npm packages,
//! the container image and the release workflow all read.

/// What builds a target's binary (through maturin, which also makes its wheel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toolchain {
    /// `maturin build --zig`: zig as the C compiler and linker, with its own
    /// glibc stubs (for an old glibc), musl and macOS libSystem; no SDK.
    Zig,
    /// Debian's mingw-w64 gcc as linker and C compiler. zig's clang refuses
    /// mimalloc's `__DATE__` (`-Werror=date-time`) for Windows.
    Mingw,
}

/// How this x86-64 Linux machine runs a target's binary, if it can.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// Directly.
    Native,
    /// Debian's `qemu-aarch64-static`; `sysroot` holds the dynamic loader
    /// and libc of a glibc build (Debian's libc6-arm64-cross), none for musl.
    Qemu { sysroot: Option<&'static str> },
    /// Debian's wine (package wine64), with the harness's shims in its prefix.
    Wine,
    /// Not here (macOS): built and inspected, run on the release runners.
    Elsewhere,
}

/// The binary's format, as the artifact checks read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Dynamically linked against glibc no newer than `max_glibc` (minor of 2.x).
    ElfGlibc { max_glibc: u32 },
    /// Statically linked (musl): no dynamic section at all.
    ElfStatic,
    /// Mach-O, runnable from this macOS version on.
    MachO { min_os: (u32, u32) },
    /// PE32+ console program.
    Pe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

// The npm and release columns are read by tasks still to come (the npm
// platform packages, the release workflow): not dead, not yet read.
#[allow(dead_code)]
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Rust's target triple.
    pub triple: &'static str,
    pub arch: Arch,
    pub format: Format,
    pub toolchain: Toolchain,
    /// `maturin --compatibility` (the wheel's platform tag policy), if any.
    pub compatibility: Option<&'static str>,
    /// The wheel's platform tag as its file name has it: maturin names a
    /// manylinux2014 wheel by both that tag and its PEP 600 alias
    /// (`manylinux2014_x86_64.manylinux_2_17_x86_64`); pip matches either.
    pub wheel_tag: &'static str,
    /// npm's `process.platform`, `process.arch` and (Linux) libc family.
    pub npm_os: &'static str,
    pub npm_cpu: &'static str,
    pub npm_libc: Option<&'static str>,
    /// The container platform this binary serves, if it goes in the image.
    pub image_platform: Option<&'static str>,
    /// GitHub Actions runner label the release workflow tests it on.
    pub release_runner: &'static str,
    pub runner: Runner,
    /// The binary must stay under this size (bytes); a jump means something
    /// unexpected was linked in.
    pub max_bytes: u64,
}

impl Target {
    /// Each platform tag the wheel carries.
    pub fn wheel_tags(&self) -> impl Iterator<Item = &'static str> {
        self.wheel_tag.split('.')
    }

    pub fn exe_suffix(&self) -> &'static str {
        if self.format == Format::Pe {
            ".exe"
        } else {
            ""
        }
    }

    /// `cosmos-emulator[.exe]`, the binary's file name in every package.
    pub fn binary_name(&self) -> String {
        format!("cosmos-emulator{}", self.exe_suffix())
    }

    /// `cosmos-emulator-<triple>[.exe]`: the release asset.
    pub fn asset_name(&self) -> String {
        format!("cosmos-emulator-{}{}", self.triple, self.exe_suffix())
    }

    /// `cosmos-emulator-linux-x64-musl`: the npm platform package.
    #[allow(dead_code)]
    pub fn npm_package(&self) -> String {
        match self.npm_libc {
            Some("musl") => format!("cosmos-emulator-{}-{}-musl", self.npm_os, self.npm_cpu),
            _ => format!("cosmos-emulator-{}-{}", self.npm_os, self.npm_cpu),
        }
    }

    /// `CARGO_TARGET_<TRIPLE>_LINKER`-style variable names use this form.
    pub fn env_triple(&self) -> String {
        self.triple.replace('-', "_")
    }
}

/// 20 MB: today's binaries are 13-15 MB.
const MAX_BYTES: u64 = 20 * 1024 * 1024;

pub const TARGETS: &[Target] = &[
    Target {
        triple: "x86_64-unknown-linux-gnu",
        arch: Arch::X86_64,
        format: Format::ElfGlibc { max_glibc: 17 },
        toolchain: Toolchain::Zig,
        compatibility: Some("manylinux2014"),
        wheel_tag: "manylinux2014_x86_64.manylinux_2_17_x86_64",
        npm_os: "linux",
        npm_cpu: "x64",
        npm_libc: Some("glibc"),
        image_platform: None,
        release_runner: "ubuntu-24.04",
        runner: Runner::Native,
        max_bytes: MAX_BYTES,
    },
    Target {
        triple: "aarch64-unknown-linux-gnu",
        arch: Arch::Aarch64,
        format: Format::ElfGlibc { max_glibc: 17 },
        toolchain: Toolchain::Zig,
        compatibility: Some("manylinux2014"),
        wheel_tag: "manylinux2014_aarch64.manylinux_2_17_aarch64",
        npm_os: "linux",
        npm_cpu: "arm64",
        npm_libc: Some("glibc"),
        image_platform: None,
        release_runner: "ubuntu-24.04-arm",
        runner: Runner::Qemu {
            sysroot: Some("/usr/aarch64-linux-gnu"),
        },
        max_bytes: MAX_BYTES,
    },
    Target {
        triple: "x86_64-unknown-linux-musl",
        arch: Arch::X86_64,
        format: Format::ElfStatic,
        toolchain: Toolchain::Zig,
        compatibility: Some("musllinux_1_2"),
        wheel_tag: "musllinux_1_2_x86_64",
        npm_os: "linux",
        npm_cpu: "x64",
        npm_libc: Some("musl"),
        image_platform: Some("linux/amd64"),
        release_runner: "ubuntu-24.04",
        runner: Runner::Native,
        max_bytes: MAX_BYTES,
    },
    Target {
        triple: "aarch64-unknown-linux-musl",
        arch: Arch::Aarch64,
        format: Format::ElfStatic,
        toolchain: Toolchain::Zig,
        compatibility: Some("musllinux_1_2"),
        wheel_tag: "musllinux_1_2_aarch64",
        npm_os: "linux",
        npm_cpu: "arm64",
        npm_libc: Some("musl"),
        image_platform: Some("linux/arm64"),
        release_runner: "ubuntu-24.04-arm",
        runner: Runner::Qemu { sysroot: None },
        max_bytes: MAX_BYTES,
    },
    Target {
        triple: "x86_64-apple-darwin",
        arch: Arch::X86_64,
        // Rust's own minimum for this target.
        format: Format::MachO { min_os: (10, 12) },
        toolchain: Toolchain::Zig,
        compatibility: None,
        wheel_tag: "macosx_10_12_x86_64",
        npm_os: "darwin",
        npm_cpu: "x64",
        npm_libc: None,
        image_platform: None,
        release_runner: "macos-13",
        runner: Runner::Elsewhere,
        max_bytes: MAX_BYTES,
    },
    Target {
        triple: "aarch64-apple-darwin",
        arch: Arch::Aarch64,
        // Rust's own minimum for this target (the first Apple silicon macOS).
        format: Format::MachO { min_os: (11, 0) },
        toolchain: Toolchain::Zig,
        compatibility: None,
        wheel_tag: "macosx_11_0_arm64",
        npm_os: "darwin",
        npm_cpu: "arm64",
        npm_libc: None,
        image_platform: None,
        release_runner: "macos-14",
        runner: Runner::Elsewhere,
        max_bytes: MAX_BYTES,
    },
    Target {
        triple: "x86_64-pc-windows-gnu",
        arch: Arch::X86_64,
        format: Format::Pe,
        toolchain: Toolchain::Mingw,
        compatibility: None,
        wheel_tag: "win_amd64",
        npm_os: "win32",
        npm_cpu: "x64",
        npm_libc: None,
        image_platform: None,
        release_runner: "windows-2022",
        runner: Runner::Wine,
        max_bytes: MAX_BYTES,
    },
];

/// The subset `.ci/run` builds (`--ci`): what its tests run here. The rest
/// is built by `cargo xtask dist` with no selection and by the release
/// workflow.
pub const CI: &[&str] = &[
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-pc-windows-gnu",
];

/// The target of `triple`, or an error listing the known ones.
pub fn find(triple: &str) -> Result<&'static Target, String> {
    TARGETS.iter().find(|t| t.triple == triple).ok_or_else(|| {
        let known: Vec<&str> = TARGETS.iter().map(|t| t.triple).collect();
        format!(
            "unknown target {triple:?}; the targets: {}",
            known.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for t in TARGETS {
            assert!(seen.insert(t.triple), "{} twice", t.triple);
            assert!(seen.insert(t.wheel_tag), "{} twice", t.wheel_tag);
        }
        let packages: std::collections::HashSet<String> =
            TARGETS.iter().map(Target::npm_package).collect();
        assert_eq!(packages.len(), TARGETS.len());
    }

    #[test]
    fn the_ci_subset_names_known_targets() {
        for triple in CI {
            find(triple).unwrap();
        }
        assert!(find("riscv64gc-unknown-linux-gnu").is_err());
    }

    #[test]
    fn wheel_tags_follow_the_format() {
        for t in TARGETS {
            let arch = match (t.format, t.arch) {
                (Format::Pe, _) => "amd64",
                (Format::MachO { .. }, Arch::Aarch64) => "arm64",
                (_, Arch::Aarch64) => "aarch64",
                (_, Arch::X86_64) => "x86_64",
            };
            for tag in t.wheel_tags() {
                assert!(tag.ends_with(arch), "{}: {tag}", t.triple);
            }
            if let Format::MachO {
                min_os: (major, minor),
            } = t.format
            {
                assert!(t.wheel_tag.starts_with(&format!("macosx_{major}_{minor}_")));
            }
        }
    }
}
