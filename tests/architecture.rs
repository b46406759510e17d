//! The house as docs/ARCHITECTURE.md draws it, checked against the code:
//! imports run one way (top → doors → capabilities → pipeline framework →
//! ground), and no transaction is opened outside the pipeline but where
//! the document's allow-list says why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, from the top; a module may import its own layer and those below.
const LAYERS: &[(&str, &[&str])] = &[
    ("top", &["main", "startup", "routes", "panic_boundary", "operations", "background", "fuzzing", "lib"]),
    ("doors", &["web", "http", "dav", "sweeper", "state"]),
    (
        "capabilities",
        &[
            "rooms",
            "series",
            "checkin",
            "catalogue",
            "capacity",
            "outbox",
            "mail",
            "history",
            "reports",
            "consistency",
            "auth",
            "display",
            "calendar",
            "people",
            "privacy",
        ],
    ),
    ("pipeline framework", &["command"]),
    (
        "ground",
        &[
            "db",
            "idempotency",
            "admission",
            "identity",
            "i18n",
            "error",
            "config",
            "policy",
            "clock",
            "metrics",
            "transport",
            "telemetry",
            "text",
            "day",
        ],
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top module a source file belongs to (`src/rooms/store/create.rs` → `rooms`).
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

/// The code of a file without its `#[cfg(test)]` module (tests may reach anywhere).
fn code_of(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    }
}

#[test]
fn every_module_has_a_layer() {
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    let unplaced: BTreeSet<String> = files.iter().map(|f| module_of(f)).filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules without a layer in tests/architecture.rs: {unplaced:?}");
}

#[test]
fn imports_run_one_way_down() {
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    let mut upward = Vec::new();
    for file in &files {
        let module = module_of(file);
        let Some(own) = layer_of(&module) else { continue };
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in code_of(&text).lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let name: String =
                    line[at + "crate::".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let Some(theirs) = layer_of(&name) else { continue };
                if theirs < own {
                    upward.push(format!(
                        "{}:{}: {module} ({}) imports {name} ({})",
                        file.strip_prefix(root()).unwrap().display(),
                        n + 1,
                        LAYERS[own].0,
                        LAYERS[theirs].0
                    ));
                }
            }
        }
    }
    assert!(upward.is_empty(), "imports that run up:\n{}", upward.join("\n"));
}

/// (file, function) pairs of docs/ARCHITECTURE.md's allow-list.
fn allowed() -> BTreeSet<(String, String)> {
    let doc = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let section = doc.split("## State changes outside the pipeline").nth(1).expect("the allow-list section");
    let section = section.split("\n## ").next().unwrap();
    let mut pairs = BTreeSet::new();
    for row in section.lines().filter(|l| l.starts_with("| `src/")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let file = cells[1].trim_matches('`').to_owned();
        for function in cells[2].split(',') {
            pairs.insert((file.clone(), function.trim().trim_matches('`').to_owned()));
        }
    }
    assert!(pairs.len() >= 5, "the allow-list reads as a table: {pairs:?}");
    pairs
}

#[test]
fn transactions_are_opened_only_by_the_pipeline_and_the_allow_list() {
    let allowed = allowed();
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    let openers = ["db::begin(", "db::begin_snapshot(", "db::transaction(", ".transaction(", "begin_transaction"];
    let mut found = BTreeSet::new();
    let mut refused = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root()).unwrap().display().to_string();
        if rel == "src/db/mod.rs" {
            continue; // where they are defined
        }
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = code_of(&text).lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("//") || !openers.iter().any(|o| line.contains(o)) {
                continue;
            }
            let function = lines[..=n]
                .iter()
                .rev()
                .find_map(|l| {
                    let at = l.find("fn ")?;
                    let name: String = l[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    (!name.is_empty()).then_some(name)
                })
                .unwrap_or_default();
            let pair = (rel.clone(), function);
            if !allowed.contains(&pair) {
                refused.push(format!("{}:{}: a transaction in {} not on the allow-list", rel, n + 1, pair.1));
            }
            found.insert(pair);
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
    let stale: Vec<_> = allowed.difference(&found).collect();
    assert!(stale.is_empty(), "allow-list rows that open no transaction any more: {stale:?}");
}
