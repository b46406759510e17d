//! `docs/RULES.md` stays true (STYLE.md "A rule has one home, and an
//! index"; issue 37): every SPEC clause of §2–§28 has a row, every path the
//! index names exists, and every item it names after a path (`path: item,
//! item`) is defined in that file. A failure names the line of RULES.md.
//! No database; the syntax checked here is the one RULES.md documents at
//! its top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Where a path may start: the folders of the repository a rule can live in.
const ROOTS: [&str; 7] = ["src/", "migrations/", "tests/", "templates/", "static/", "benches/", "fuzz/"];

/// The SPEC sections the index covers.
const FIRST: u32 = 2;
const LAST: u32 = 28;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rules() -> String {
    std::fs::read_to_string(repo().join("docs/RULES.md")).expect("docs/RULES.md is readable")
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path a line names: a run of path characters that starts with one of
/// [`ROOTS`] where no path character stands before it; a sentence's full
/// stop at its end is not part of it.
fn paths_in(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut prev: Option<char> = None;
    for (i, c) in line.char_indices() {
        if prev.is_none_or(|p| !is_path_char(p)) && ROOTS.iter().any(|r| line[i..].starts_with(r)) {
            let len = line[i..].find(|c: char| !is_path_char(c)).unwrap_or(line.len() - i);
            found.push(line[i..i + len].trim_end_matches('.'));
        }
        prev = Some(c);
    }
    found
}

/// `word` stands in `text` with no identifier character on either side
/// (ASCII case ignored when `fold`).
fn has_word(text: &str, word: &str, fold: bool) -> bool {
    let (hay, needle) =
        if fold { (text.to_ascii_lowercase(), word.to_ascii_lowercase()) } else { (text.to_owned(), word.to_owned()) };
    let mut from = 0;
    while let Some(at) = hay[from..].find(&needle) {
        let start = from + at;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        let after = hay[end..].chars().next();
        if before.is_none_or(|c| !is_ident_char(c)) && after.is_none_or(|c| !is_ident_char(c)) {
            return true;
        }
        from = end;
    }
    false
}

/// `line` begins with `word` followed by no identifier character; the rest.
fn after_word<'a>(line: &'a str, word: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(word)?;
    if rest.starts_with(is_ident_char) {
        return None;
    }
    Some(rest)
}

/// A line of Rust without its visibility and fn qualifiers.
fn bare(line: &str) -> &str {
    let mut s = line.trim_start();
    loop {
        let before = s;
        if let Some(rest) = after_word(s, "pub") {
            s = rest.trim_start();
            if s.starts_with('(') {
                s = s.find(')').map_or(s, |i| s[i + 1..].trim_start());
            }
        }
        for q in ["async", "unsafe", "default"] {
            if let Some(rest) = after_word(s, q) {
                s = rest.trim_start();
            }
        }
        if let Some(rest) = after_word(s, "const") {
            // `const fn` is a function; `const NAME` stays a constant.
            if after_word(rest.trim_start(), "fn").is_some() {
                s = rest.trim_start();
            }
        }
        if s == before {
            return s;
        }
    }
}

/// Whether `name` is defined in the Rust source `text`: as a `fn`, `struct`,
/// `enum`, `union`, `trait`, `type`, `const`, `static`, `mod` or
/// `macro_rules!`, named on an `impl` line, or as an enum variant or a
/// struct field (a line that starts with it).
fn defines(text: &str, name: &str) -> bool {
    text.lines().map(str::trim_start).filter(|l| !l.starts_with("//")).any(|line| {
        let b = bare(line);
        let keyword = ["fn", "struct", "enum", "union", "trait", "type", "const", "static", "mod"].iter().any(|k| {
            after_word(b, k).is_some_and(|rest| {
                let rest = rest.trim_start();
                let rest = rest.strip_prefix("mut ").unwrap_or(rest);
                after_word(rest, name).is_some()
            })
        });
        let macro_rules =
            b.strip_prefix("macro_rules!").is_some_and(|rest| after_word(rest.trim_start(), name).is_some());
        let implemented = after_word(b, "impl").is_some() && has_word(b.split('{').next().unwrap_or(b), name, false);
        let member = after_word(b, name).is_some_and(|rest| {
            let rest = rest.trim_start();
            rest.is_empty()
                || rest.starts_with(['(', '{', ',', '='])
                || (rest.starts_with(':') && !rest.starts_with("::"))
        });
        keyword || macro_rules || implemented || member
    })
}

/// What an item names, as the index may write it.
enum Item<'a> {
    /// `"text"`: the text stands in the file as it is.
    Verbatim(&'a str),
    /// `A::b` (or `name!`, a macro): each segment is defined in the file.
    Named(Vec<&'a str>),
}

fn parse_item(raw: &str) -> Option<Item<'_>> {
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return (!inner.is_empty()).then_some(Item::Verbatim(inner));
    }
    let raw = raw.strip_suffix('!').unwrap_or(raw);
    let segments: Vec<&str> = raw.split("::").collect();
    // `-` only in a name of one segment: a Fluent message id, an SQL value.
    let one = segments.len() == 1;
    let ident = |s: &&str| {
        !s.is_empty()
            && s.chars().all(|c| is_ident_char(c) || (c == '-' && one))
            && !s.starts_with(|c: char| c.is_ascii_digit() || c == '-')
    };
    segments.iter().all(ident).then_some(Item::Named(segments))
}

/// Every file under `dir` (a migration's directory), read.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p, text));
            }
        }
    }
    out
}

/// Whether `item` is found in the file `path` (or, for a directory, in one
/// of its files), as its kind of file defines things.
fn holds(path: &Path, item: &Item<'_>) -> bool {
    let files = if path.is_dir() {
        files_under(path)
    } else {
        vec![(path.to_path_buf(), std::fs::read_to_string(path).unwrap_or_default())]
    };
    files.iter().any(|(file, text)| {
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        match item {
            Item::Verbatim(t) => text.contains(t),
            Item::Named(segments) => match ext {
                "rs" => segments.iter().all(|s| defines(text, s)),
                "sql" => segments.len() == 1 && has_word(text, segments[0], true),
                "ftl" => {
                    segments.len() == 1
                        && text
                            .lines()
                            .any(|l| l.strip_prefix(segments[0]).is_some_and(|r| r.trim_start().starts_with('=')))
                }
                _ => segments.iter().all(|s| has_word(text, s, false)),
            },
        }
    })
}

/// One row of the index: `| §N.M | "quote" | home |`.
struct Row<'a> {
    line: usize,
    section: u32,
    clause: u32,
    home: &'a str,
}

fn parse_row(line: &str) -> Result<Option<(u32, u32, &str)>, String> {
    let Some(rest) = line.strip_prefix("| §").filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) else {
        return Ok(None); // not a row (the table's head, prose)
    };
    let cells: Vec<&str> = rest.split('|').collect();
    if cells.len() != 4 || !cells[3].trim().is_empty() {
        return Err("a row has three cells: `| §N.M | \"quote\" | home |` (no `|` inside a cell)".into());
    }
    let (section, clause) = cells[0]
        .trim()
        .split_once('.')
        .and_then(|(n, m)| Some((n.parse().ok()?, m.parse().ok()?)))
        .ok_or_else(|| format!("`§{}` is not a clause number §N.M", cells[0].trim()))?;
    let quote = cells[1].trim();
    if !(quote.starts_with('"') && quote.ends_with('"') && quote.len() > 2) {
        return Err("the second cell quotes the clause's words in double quotes".into());
    }
    Ok(Some((section, clause, cells[2].trim())))
}

/// `text` split at each `sep` that stands outside double quotes.
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let (mut parts, mut start, mut quoted) = (Vec::new(), 0, false);
    for (i, c) in text.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            parts.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Checks one home cell; the problems found.
fn check_home(home: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if home.is_empty() {
        problems.push("the home cell is empty".to_owned());
    }
    for entry in split_outside_quotes(home, ';').into_iter().map(str::trim).filter(|e| !e.is_empty()) {
        if !ROOTS.iter().any(|r| entry.starts_with(r)) {
            continue; // words: "not built yet (issue N)", a note; its paths are checked with the line's
        }
        let path_len = entry.find(|c: char| !is_path_char(c)).unwrap_or(entry.len());
        let (path, rest) = entry.split_at(path_len);
        let path = path.trim_end_matches('.');
        let full = repo().join(path);
        if !full.exists() {
            continue; // reported with the line's paths
        }
        let rest = rest.trim();
        if rest.is_empty() {
            continue;
        }
        let Some(items) = rest.strip_prefix(':') else {
            problems.push(format!("`{entry}`: after a path comes `: item, item` or the next `;`"));
            continue;
        };
        for raw in split_outside_quotes(items, ',').into_iter().map(str::trim) {
            match parse_item(raw) {
                None => {
                    problems.push(format!("`{path}: {raw}`: an item is `Name`, `Type::name`, `name!` or `\"text\"`"))
                }
                Some(item) if !holds(&full, &item) => problems
                    .push(format!("`{path}: {raw}` is not defined there (moved or renamed? find it and fix the row)")),
                Some(_) => {}
            }
        }
    }
    problems
}

/// The `## N.` sections of SPEC.md from §2 to §28, when SPEC.md is at hand
/// (`YEYAK_SPEC`, else `../shared/SPEC.md` beside the repository).
fn spec_sections() -> Option<BTreeMap<u32, String>> {
    let path = std::env::var_os("YEYAK_SPEC").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/SPEC.md"));
    let text = std::fs::read_to_string(path).ok()?;
    let sections = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter_map(|l| {
            let (n, title) = l.split_once(". ")?;
            Some((n.parse::<u32>().ok()?, title.trim().to_owned()))
        })
        .filter(|(n, _)| (FIRST..=LAST).contains(n))
        .collect();
    Some(sections)
}

#[test]
fn every_path_and_item_the_index_names_exists() {
    let text = rules();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for path in paths_in(line) {
            if !repo().join(path).exists() {
                problems.push(format!("docs/RULES.md:{}: `{path}` does not exist", i + 1));
            }
        }
        match parse_row(line) {
            Err(why) => problems.push(format!("docs/RULES.md:{}: {why}", i + 1)),
            Ok(Some((_, _, home))) => {
                problems.extend(check_home(home).into_iter().map(|p| format!("docs/RULES.md:{}: {p}", i + 1)))
            }
            Ok(None) => {}
        }
    }
    assert!(problems.is_empty(), "docs/RULES.md is out of date:\n{}", problems.join("\n"));
}

#[test]
fn every_spec_section_from_2_to_28_has_rows_numbered_in_order() {
    let text = rules();
    let mut rows: Vec<Row<'_>> = Vec::new();
    let mut heading: Option<u32> = None;
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## §") {
            heading = h.split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse().ok());
            continue;
        }
        if let Ok(Some((section, clause, home))) = parse_row(line) {
            if heading != Some(section) {
                problems.push(format!(
                    "docs/RULES.md:{}: §{section}.{clause} stands under another section's heading",
                    i + 1
                ));
            }
            rows.push(Row { line: i + 1, section, clause, home });
        }
    }
    let expected: BTreeSet<u32> = match spec_sections() {
        Some(spec) => {
            assert!(!spec.is_empty(), "SPEC.md has no `## N.` sections between §{FIRST} and §{LAST}");
            spec.into_keys().collect()
        }
        None => (FIRST..=LAST).collect(),
    };
    for n in &expected {
        if !rows.iter().any(|r| r.section == *n) {
            problems.push(format!("docs/RULES.md: SPEC §{n} has no row"));
        }
    }
    let mut last: BTreeMap<u32, u32> = BTreeMap::new();
    for r in &rows {
        if !expected.contains(&r.section) {
            problems
                .push(format!("docs/RULES.md:{}: §{} is not a section of SPEC §{FIRST}–§{LAST}", r.line, r.section));
        }
        let next = last.get(&r.section).copied().unwrap_or(0) + 1;
        if r.clause != next {
            problems.push(format!(
                "docs/RULES.md:{}: §{}.{} should be §{}.{next} (clauses in order, none twice)",
                r.line, r.section, r.clause, r.section
            ));
        }
        last.insert(r.section, r.clause);
        if r.home.is_empty() {
            problems.push(format!("docs/RULES.md:{}: §{}.{} names no home", r.line, r.section, r.clause));
        }
    }
    assert!(problems.is_empty(), "docs/RULES.md does not cover SPEC:\n{}", problems.join("\n"));
}

#[test]
fn the_checker_reads_definitions_as_documented() {
    let src = "pub(crate) async fn claim_room() {}\nimpl Command for CreateBooking {\n    RoomTimeTaken,\n    pub timezone: Tz,\n    pub const fn creates(self) {}\nmacro_rules! live_statuses {\n    pub const LIVE: [S; 2] = [];\n// fn commented_out() {}\n";
    for name in
        ["claim_room", "CreateBooking", "Command", "RoomTimeTaken", "timezone", "creates", "live_statuses", "LIVE"]
    {
        assert!(defines(src, name), "{name}");
    }
    for name in ["claim", "room", "commented_out", "Tz", "S"] {
        assert!(!defines(src, name), "{name}");
    }
    assert_eq!(
        paths_in("see src/rooms/domain.rs: TimeRange::new and migrations/x/up.sql."),
        ["src/rooms/domain.rs", "migrations/x/up.sql"]
    );
    assert!(paths_in("a/src/x.rs").is_empty());
    assert!(parse_item("TimeRange::new").is_some() && parse_item("live_statuses!").is_some());
    assert!(parse_item("\"booking.create\"").is_some());
    assert!(parse_item("the quota").is_none() && parse_item("f()").is_none());
}
