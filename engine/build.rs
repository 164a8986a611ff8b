//! Finds "fancy" magic numbers for rook and bishop attacks and writes the
//! complete sliding-attack table as Rust source into `OUT_DIR`.
//!
//! Why at build time: the table is ~107k entries. Computing it at start-up
//! would put a lazy-initialisation check on the move generator's hottest path,
//! and a `const fn` magic search would make every build slow. A deterministic
//! PRNG makes the output identical on every machine.

use std::fmt::Write as _;
use std::path::PathBuf;

include!("src/geometry.rs");

struct Found {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

/// xorshift64*: small, deterministic, good enough to draw sparse candidates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Candidates with few set bits map occupancies to indices far more often.
    fn sparse(&mut self) -> u64 {
        self.next() & self.next() & self.next()
    }
}

fn find_magics(deltas: &[(i8, i8); 4], rng: &mut Rng, table: &mut Vec<u64>) -> Vec<Found> {
    let mut found = Vec::with_capacity(64);
    for square in 0u8..64 {
        let mask = relevant_occupancy(square, deltas);
        let bits = mask.count_ones();
        let shift = 64 - bits;
        // Enumerate every subset of the mask (carry-rippler trick).
        let mut occupancies = Vec::with_capacity(1 << bits);
        let mut subset = 0u64;
        loop {
            occupancies.push((subset, sliding_attacks(square, subset, deltas)));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        let size = 1usize << bits;
        let mut slots = vec![0u64; size];
        let mut used = vec![0u32; size];
        let mut attempt = 0u32;
        let magic = loop {
            attempt += 1;
            let magic = rng.sparse();
            if (mask.wrapping_mul(magic) & 0xff00_0000_0000_0000).count_ones() < 6 {
                continue;
            }
            let mut ok = true;
            for &(occupancy, attacks) in &occupancies {
                let index = (occupancy.wrapping_mul(magic) >> shift) as usize;
                if used[index] != attempt {
                    used[index] = attempt;
                    slots[index] = attacks;
                } else if slots[index] != attacks {
                    ok = false;
                    break;
                }
            }
            if ok {
                break magic;
            }
        };
        let offset = table.len();
        table.extend_from_slice(&slots);
        found.push(Found {
            mask,
            magic,
            shift,
            offset,
        });
    }
    found
}

fn write_magics(out: &mut String, name: &str, found: &[Found]) {
    writeln!(out, "pub(crate) static {name}: [Magic; 64] = [").unwrap();
    for f in found {
        writeln!(
            out,
            "    Magic {{ mask: {:#x}, magic: {:#x}, shift: {}, offset: {} }},",
            f.mask, f.magic, f.shift, f.offset
        )
        .unwrap();
    }
    out.push_str("];\n");
}

/// The engine's version for the records it writes (`datagen`'s provenance
/// sidecar): the last commit that changed this crate, `-dirty` when the
/// crate differs from it, `unknown` outside a git checkout (a source
/// tarball, a container build). The crate's own last commit rather than
/// the repository's HEAD, so that commits elsewhere (the server, the web)
/// do not make the generator start a new data file.
fn engine_commit() -> String {
    let git = |args: &[&str]| -> Option<String> {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let Some(commit) = git(&["log", "-1", "--format=%H", "--", "."]).filter(|c| !c.is_empty())
    else {
        return "unknown".into();
    };
    // Run again when a commit is made (HEAD, and the branch it names),
    // and when any source changes (the dirty mark). Not on the index,
    // which `git status` and `git add` anywhere in the repository touch:
    // that would rebuild the engine, and everything above it, after every
    // `git status`. A commit still costs the next build one engine
    // compile.
    let mut watched = vec!["HEAD".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for path in watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &path]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    for path in ["src", "nets", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let dirty = git(&[
        "status",
        "--porcelain",
        "--",
        "src",
        "nets",
        "build.rs",
        "Cargo.toml",
    ])
    .is_none_or(|changes| !changes.is_empty());
    if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/geometry.rs");
    println!("cargo:rustc-env=ROOKERY_ENGINE_COMMIT={}", engine_commit());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut table = Vec::new();
    let rooks = find_magics(&ROOK_DELTAS, &mut rng, &mut table);
    let bishops = find_magics(&BISHOP_DELTAS, &mut rng, &mut table);

    let mut out = String::with_capacity(table.len() * 24);
    out.push_str("// Generated by build.rs: magic numbers and the sliding-attack table.\n");
    write_magics(&mut out, "ROOK_MAGICS", &rooks);
    write_magics(&mut out, "BISHOP_MAGICS", &bishops);
    writeln!(
        out,
        "pub(crate) static SLIDER_ATTACKS: [u64; {}] = [",
        table.len()
    )
    .unwrap();
    for chunk in table.chunks(8) {
        out.push_str("   ");
        for value in chunk {
            write!(out, " {value:#x},").unwrap();
        }
        out.push('\n');
    }
    out.push_str("];\n");

    let path =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("magics.rs");
    std::fs::write(path, out).expect("write magics.rs");
}
