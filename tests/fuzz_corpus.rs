//! The saved fuzz corpus and every input that ever failed (SPEC §22),
//! replayed through the harnesses of `yeyak::fuzzing` on the stable
//! toolchain, without a database: `fuzz/corpus/{target}/` (what `cargo
//! fuzz` found interesting) and `fuzz/regressions/{target}/` (the inputs
//! that once crashed, named for what they broke). A failure names the file.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use yeyak::fuzzing::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files of `dir`, by name (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect();
    found.sort();
    found
}

/// What a harness panicked with.
fn message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

fn replay(kind: &str) -> (usize, Vec<String>) {
    let mut replayed = 0;
    let mut failures = Vec::new();
    for (name, harness) in TARGETS {
        for file in files(&fuzz_dir().join(kind).join(name)) {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            replayed += 1;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| harness(&data))) {
                failures.push(format!("{}: {}", file.display(), message(panic.as_ref())));
            }
        }
    }
    (replayed, failures)
}

#[test]
fn the_corpus_replays_without_a_panic() {
    let (replayed, failures) = replay("corpus");
    assert!(replayed >= TARGETS.len(), "every target has a corpus (replayed {replayed} files)");
    assert!(failures.is_empty(), "{} of {replayed} corpus inputs panic:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_input_that_ever_failed_passes() {
    let (replayed, failures) = replay("regressions");
    assert!(failures.is_empty(), "{} of {replayed} regressions panic:\n{}", failures.len(), failures.join("\n"));
}

/// A directory or target file without a harness would be fuzzed or
/// replayed by nobody.
#[test]
fn every_fuzz_target_has_a_harness_and_a_corpus() {
    let known = |name: &str| TARGETS.iter().any(|(n, _)| *n == name);
    for kind in ["corpus", "regressions"] {
        for dir in std::fs::read_dir(fuzz_dir().join(kind)).into_iter().flatten().filter_map(Result::ok) {
            let name = dir.file_name().to_string_lossy().into_owned();
            assert!(known(&name), "fuzz/{kind}/{name} has no harness in yeyak::fuzzing::TARGETS");
        }
    }
    for (name, _) in TARGETS {
        let target = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let source = std::fs::read_to_string(&target).unwrap_or_else(|_| panic!("no {}", target.display()));
        assert!(source.contains(&format!("yeyak::fuzzing::{name}(")), "{} calls its harness", target.display());
        assert!(!files(&fuzz_dir().join("corpus").join(name)).is_empty(), "fuzz/corpus/{name} is empty");
    }
}
