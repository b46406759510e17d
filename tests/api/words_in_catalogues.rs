//! Words live in the catalogues; codes in code (STYLE.md, issue 37, SPEC
//! §19): no Korean text is written in `src/**/*.rs` outside `src/i18n/` and
//! outside test code, so a message made in code can never again disagree
//! with the catalogue's; and every error code has a message in both
//! catalogues, with the details its refusals carry and without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use yeyak::error::{ApiError, ErrorCode};
use yeyak::i18n::api::message;
use yeyak::i18n::{I18n, Lang, MISSING};

/// Hangul: syllables, jamo and compatibility jamo.
fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}' | '\u{A960}'..='\u{A97F}' | '\u{D7B0}'..='\u{D7FF}')
}

/// The one Hangul literal outside `i18n/` that is data, not a text: the
/// default area, equal to the `area` column's default of the migration
/// named (rooms keep their area as entered, in every language).
const DATA: &[(&str, &str, &str)] =
    &[("src/catalogue/domain/mod.rs", "본관", "migrations/2026-12-01-000001_rooms_as_data/up.sql")];

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A string or character literal, its value (escapes decoded) and the
    /// line of each of its characters' start.
    Literal {
        value: String,
        line: usize,
    },
    Ident(String),
    Punct(char),
}

/// The tokens of a Rust source that matter here: literals (strings, raw
/// strings, byte and C strings, characters), identifiers and punctuation,
/// each with its line; comments and whitespace dropped.
fn tokens(source: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => {
                let mut depth = 0;
                loop {
                    if i >= chars.len() {
                        break;
                    }
                    if chars[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => {
                let start = line;
                let (value, next) = quoted(&chars, i + 1, '"', &mut line);
                out.push((start, Token::Literal { value, line: start }));
                i = next;
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{AC00}', '"') or a
                // lifetime or label ('a, 'outer:).
                if at(i + 1) == '\\' || (at(i + 1) != '\'' && at(i + 2) == '\'') {
                    let start = line;
                    let (value, next) = quoted(&chars, i + 1, '\'', &mut line);
                    out.push((start, Token::Literal { value, line: start }));
                    i = next;
                } else {
                    out.push((line, Token::Punct('\'')));
                    i += 1;
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let raw = matches!(word.as_str(), "r" | "br" | "cr");
                if raw && (at(i) == '"' || at(i) == '#') {
                    let mut hashes = 0;
                    while at(i + hashes) == '#' {
                        hashes += 1;
                    }
                    if at(i + hashes) == '"' {
                        // A raw string: no escapes, ends at `"` and as many `#`.
                        let begin = line;
                        let mut j = i + hashes + 1;
                        let mut value = String::new();
                        while j < chars.len() {
                            if chars[j] == '"' && (0..hashes).all(|k| at(j + 1 + k) == '#') {
                                break;
                            }
                            if chars[j] == '\n' {
                                line += 1;
                            }
                            value.push(chars[j]);
                            j += 1;
                        }
                        out.push((begin, Token::Literal { value, line: begin }));
                        i = j + 1 + hashes;
                        continue;
                    }
                }
                if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                    let start = line;
                    let (value, next) = quoted(&chars, i + 1, '"', &mut line);
                    out.push((start, Token::Literal { value, line: start }));
                    i = next;
                    continue;
                }
                if word == "b" && at(i) == '\'' {
                    let start = line;
                    let (value, next) = quoted(&chars, i + 1, '\'', &mut line);
                    out.push((start, Token::Literal { value, line: start }));
                    i = next;
                    continue;
                }
                out.push((line, Token::Ident(word)));
            }
            c if c.is_ascii_digit() => {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            c => {
                out.push((line, Token::Punct(c)));
                i += 1;
            }
        }
    }
    out
}

/// The value of a quoted literal from `i` (just after its opening quote) to
/// its closing `end`, escapes decoded (`\u{AC00}` is a Hangul letter too);
/// returns it and the index after the closing quote.
fn quoted(chars: &[char], mut i: usize, end: char, line: &mut usize) -> (String, usize) {
    let mut value = String::new();
    while i < chars.len() && chars[i] != end {
        match chars[i] {
            '\\' => {
                let next = chars.get(i + 1).copied().unwrap_or('\0');
                if next == 'u' && chars.get(i + 2) == Some(&'{') {
                    let close = (i + 3..chars.len()).find(|&k| chars[k] == '}').unwrap_or(chars.len() - 1);
                    let hex: String = chars[i + 3..close].iter().filter(|c| **c != '_').collect();
                    if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        value.push(c);
                    }
                    i = close + 1;
                } else {
                    if next == '\n' {
                        *line += 1;
                    }
                    value.push(next);
                    i += 2;
                }
            }
            c => {
                if c == '\n' {
                    *line += 1;
                }
                value.push(c);
                i += 1;
            }
        }
    }
    (value, i + 1)
}

/// A source's literals outside test code (items under `#[cfg(test)]`), and
/// the modules it declares test-only (`#[cfg(test)] mod tests;`).
struct Scanned {
    literals: Vec<(usize, String)>,
    in_tests: Vec<(usize, String)>,
    test_modules: Vec<String>,
}

fn scan(source: &str) -> Scanned {
    let tokens = tokens(source);
    let mut scanned = Scanned { literals: Vec::new(), in_tests: Vec::new(), test_modules: Vec::new() };
    let is = |k: usize, t: Token| tokens.get(k).map(|(_, x)| x) == Some(&t);
    let ident = |k: usize, w: &str| is(k, Token::Ident(w.to_owned()));
    let punct = |k: usize, c: char| is(k, Token::Punct(c));
    let mut k = 0;
    while k < tokens.len() {
        let cfg_test = punct(k, '#')
            && punct(k + 1, '[')
            && ident(k + 2, "cfg")
            && punct(k + 3, '(')
            && ident(k + 4, "test")
            && punct(k + 5, ')')
            && punct(k + 6, ']');
        if !cfg_test {
            if let (line, Token::Literal { value, .. }) = &tokens[k] {
                scanned.literals.push((*line, value.clone()));
            }
            k += 1;
            continue;
        }
        // The item under the attribute: to its `;` (a declaration, such as
        // `mod tests;`) or to the `}` that closes its body.
        k += 7;
        let (mut parens, mut first_brace) = (0i32, None);
        let start = k;
        while k < tokens.len() {
            match &tokens[k].1 {
                Token::Punct('(' | '[') => parens += 1,
                Token::Punct(')' | ']') => parens -= 1,
                Token::Punct(';') if parens == 0 && first_brace.is_none() => break,
                Token::Punct('{') if parens == 0 => {
                    first_brace = Some(k);
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        if first_brace.is_none() {
            if let Some(m) = (start..k).find(|&m| ident(m, "mod")) {
                if let Some((_, Token::Ident(name))) = tokens.get(m + 1) {
                    scanned.test_modules.push(name.clone());
                }
            }
        } else {
            let mut depth = 0;
            while k < tokens.len() {
                match &tokens[k].1 {
                    Token::Punct('{') => depth += 1,
                    Token::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Token::Literal { value, line } => scanned.in_tests.push((*line, value.clone())),
                    _ => {}
                }
                k += 1;
            }
        }
        for t in &tokens[start..k.min(tokens.len())] {
            if let (line, Token::Literal { value, .. }) = t {
                if first_brace.is_none() {
                    scanned.in_tests.push((*line, value.clone()));
                }
            }
        }
        k += 1;
    }
    scanned
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The file a test-only `mod name;` in `file` names.
fn module_files(file: &Path, name: &str) -> [PathBuf; 2] {
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let base = if matches!(stem, "mod" | "lib" | "main") { dir.to_path_buf() } else { dir.join(stem) };
    [base.join(format!("{name}.rs")), base.join(name).join("mod.rs")]
}

#[test]
fn no_korean_text_is_written_in_code_outside_the_catalogues() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let files = rust_files(&src);
    let scanned: BTreeMap<PathBuf, Scanned> =
        files.iter().map(|f| (f.clone(), scan(&std::fs::read_to_string(f).unwrap()))).collect();
    let test_only: Vec<PathBuf> = scanned
        .iter()
        .flat_map(|(file, s)| s.test_modules.iter().flat_map(move |name| module_files(file, name)))
        .collect();
    let (mut found, mut literals, mut skipped_hangul) = (Vec::new(), 0, 0);
    for (file, s) in &scanned {
        let name = file.strip_prefix(root).unwrap().to_str().unwrap().replace('\\', "/");
        if name.starts_with("src/i18n/") || test_only.contains(file) {
            skipped_hangul += s.literals.iter().filter(|(_, v)| v.chars().any(is_hangul)).count();
            continue;
        }
        skipped_hangul += s.in_tests.iter().filter(|(_, v)| v.chars().any(is_hangul)).count();
        literals += s.literals.len();
        for (line, value) in &s.literals {
            if !value.chars().any(is_hangul) || DATA.iter().any(|(f, v, _)| *f == name && v == value) {
                continue;
            }
            found.push(format!("{name}:{line}: {value:?}"));
        }
    }
    // The scan sees: thousands of literals, and the Korean of test code it
    // leaves alone (a blind lexer would pass anything).
    assert!(literals > 3000, "only {literals} literals read");
    assert!(skipped_hangul > 50, "only {skipped_hangul} Korean literals seen in test code and i18n/");
    assert!(test_only.iter().any(|f| f.ends_with("src/catalogue/domain/tests.rs")), "{test_only:?}");
    for (file, value, migration) in DATA {
        let sql = std::fs::read_to_string(root.join(migration)).unwrap();
        assert!(sql.contains(&format!("DEFAULT '{value}'")), "{file}: {value:?} is no longer {migration}'s default");
    }
    assert!(
        found.is_empty(),
        "Korean written in code: move the words to src/i18n/locales/{{ko,en}}/*.ftl (an ApiError carries its code \
         and details; a text takes its values as Fluent arguments):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_reads_rust_as_rust() {
    let source = r##"
        const A: &str = "plain"; // "주석은 글이 아닙니다"
        /* "여러 줄 /* 겹친 */ 주석" */
        fn f<'a>(x: &'a str) -> char { let _q = '"'; let _h = '한'; 'x' }
        const B: &str = r#"raw "한글" raw"#;
        const C: &str = "\u{D55C}";
        const D: &[u8] = b"bytes";
        #[cfg(test)]
        mod tests {
            const E: &str = "테스트";
            fn g() { let _ = "{"; }
        }
        #[cfg(test)]
        mod more;
        const F: &str = "끝";
    "##;
    let s = scan(source);
    let values: Vec<&str> = s.literals.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(values, ["plain", "\"", "한", "x", "raw \"한글\" raw", "한", "bytes", "끝"]);
    assert_eq!(s.literals.last().unwrap().0, 15, "lines are counted");
    assert_eq!(s.in_tests.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>(), ["테스트", "{"]);
    assert_eq!(s.test_modules, ["more"]);
}

/// What each refusal that takes arguments carries in its details, as the
/// code that makes it sends them, and the Korean it reads (the words the
/// code wrote before they moved to the catalogue, SPEC §19).
fn with_details() -> Vec<(ErrorCode, Value, &'static str)> {
    use ErrorCode::*;
    vec![
        (MalformedRequest, json!({"field": "title", "reason": "too long"}), "요청을 확인해 주세요: title (too long)"),
        (NotFound, json!({"what": "booking"}), "찾을 수 없습니다: booking"),
        (StaleRevision, json!({"expectedRevision": 1, "currentRevision": 2}), "그사이 바뀌었습니다 (현재 리비전 2)."),
        (UnknownRoom, json!({"field": "rooms", "room": "Z9"}), "알 수 없는 회의실입니다: Z9"),
        (
            TimeNotMinuteAligned,
            json!({"field": "startsAt"}),
            "예약 시간은 분 단위로 정해야 합니다 (초는 0이어야 합니다).",
        ),
        (InvalidTimeRange, json!({"field": "endsAt"}), "끝나는 시간은 시작 시간보다 뒤여야 합니다."),
        (BookingTooLong, json!({"field": "endsAt", "maxMinutes": 120}), "예약은 최대 120분까지 할 수 있습니다."),
        (BookingInPast, json!({"field": "startsAt"}), "지난 시간은 예약할 수 없습니다."),
        (
            BeyondHorizon,
            json!({"field": "startsAt", "horizonDays": 30}),
            "이 회의실은 30일 앞까지만 예약할 수 있습니다.",
        ),
        (
            SeriesTooLong,
            json!({"field": "recurrence", "limit": "occurrences", "maxOccurrences": 366, "occurrences": 367}),
            "반복 예약은 366회까지 할 수 있습니다.",
        ),
        (
            SeriesTooLong,
            json!({"field": "recurrence", "limit": "years", "maxYears": 5, "lastOccurrence": "2036-01-01T00:00:00Z"}),
            "반복 예약은 첫 회부터 5년 안에 끝나야 합니다.",
        ),
        (
            InvalidRecurrence,
            json!({"field": "recurrence", "reason": "FREQ is required"}),
            "반복 규칙을 이해할 수 없습니다: FREQ is required",
        ),
        (
            VersionConflict,
            json!({"expectedVersion": 1, "currentVersion": 2}),
            "예약이 그사이 바뀌었습니다 (현재 버전 2). 다시 불러와 주세요.",
        ),
        (
            QuotaExceeded,
            json!({"maxActiveBookings": 3, "active": 3, "adding": 1}),
            "앞으로의 예약은 한 사람당 3건까지 할 수 있습니다.",
        ),
        (
            CheckInClosed,
            json!({"opensAt": "2030-01-07T00:50:00Z", "closesAt": "2030-01-07T01:15:00Z",
                   "opensMinutesBefore": 10, "closesMinutesAfter": 15}),
            "체크인은 시작 10분 전부터 시작 후 15분까지 할 수 있습니다.",
        ),
        (
            SeriesConflict,
            json!({"conflicts": [{"startsAt": "2030-01-07T01:00:00Z", "endsAt": "2030-01-07T02:00:00Z", "bookingId": 7}]}),
            "이미 예약된 날짜가 1개 있습니다. 나머지만 예약하려면 onConflict를 skip으로 보내 주세요.",
        ),
        (RoomCodeTaken, json!({"field": "code", "code": "A"}), "이미 있는 회의실 코드입니다: A"),
        (AreaCodeTaken, json!({"field": "code", "code": "annex"}), "이미 있는 구역 코드입니다: annex"),
        (HolidayCalendarCodeTaken, json!({"field": "code", "code": "kr"}), "이미 있는 휴일 달력 코드입니다: kr"),
        (
            OutsideWorkingHours,
            json!({"field": "startsAt", "area": "NY"}),
            "NY 구역은 근무 시간 안에만 예약할 수 있습니다.",
        ),
        (
            AreaClosed,
            json!({"field": "startsAt", "area": "NY", "date": "2027-07-05", "holiday": "Independence Day"}),
            "2027-07-05은 NY 구역이 쉬는 날입니다: Independence Day",
        ),
        (
            InvalidTimeZone,
            json!({"field": "timeZone", "timeZone": "Mars/Olympus"}),
            "시간대 이름이 아닙니다 (IANA 이름, 예: Asia/Seoul): Mars/Olympus",
        ),
        (
            RoomPositionTaken,
            json!({"field": "position", "area": "2F", "position": 3}),
            "2F의 3번 자리에는 이미 다른 회의실이 있습니다.",
        ),
        (
            SuiteInOtherArea,
            json!({"field": "suite", "suite": "ABC", "area": "2F"}),
            "묶음 ABC의 회의실은 한 구역에 있어야 합니다.",
        ),
        (
            RoomHasFutureBookings,
            json!({"count": 2, "bookingIds": [1, 2]}),
            "앞으로의 예약 2건이 있습니다. 함께 취소하려면 cancelFutureBookings를 켜 주세요.",
        ),
        (
            RoomCombinationNotAllowed,
            json!({"field": "rooms", "rooms": ["A", "C"], "reason": "suite_run",
                   "examples": "A+B, B+C, A+B+C", "first": "A", "last": "C"}),
            "이어진 회의실만 함께 예약할 수 있습니다 (예: A+B, B+C, A+B+C). A+C처럼 가운데를 건너뛸 수 없습니다.",
        ),
        (
            RoomCombinationNotAllowed,
            json!({"field": "rooms", "rooms": ["A", "X"], "reason": "apart"}),
            "이어진 회의실만 함께 예약할 수 있습니다. 서로 다른 묶음이거나 묶음이 없는 방은 따로 예약해 주세요.",
        ),
        (
            Forbidden,
            json!({"field": "rooms", "reason": "display_own_room"}),
            "도어 디스플레이는 자기 회의실만 예약할 수 있습니다.",
        ),
        (Forbidden, json!({"reason": "app_password_person"}), "앱 비밀번호는 로그인한 사람만 만들 수 있습니다."),
        (InvalidState, json!({"what": "booking", "state": "CANCELLED"}), "이미 취소된 예약입니다."),
        (InvalidState, json!({"what": "booking", "state": "RELEASED"}), "자동 반납된 예약입니다."),
        (InvalidState, json!({"what": "room", "state": "RETIRED"}), "폐지된 회의실입니다."),
        (NotOrganizer, json!({}), "예약한 사람(또는 관리자)만 바꿀 수 있습니다."),
        (CheckInNotRequired, json!({}), "이 예약은 체크인이 필요 없습니다."),
        (RoomTimeTaken, json!({}), "이미 예약된 시간입니다"),
        (SuiteInOtherArea, json!({}), "묶음의 회의실은 한 구역에 있어야 합니다."),
        (ReservedTenant, json!({"field": "tenant", "tenant": "staff"}), "예약된 테넌트 이름입니다: staff"),
        (Internal, json!({"requestId": "req-1"}), "내부 오류가 났습니다 (요청 req-1)."),
        (TooManyHrefs, json!({"max": 100}), "한 번에 최대 100개 주소까지 물을 수 있습니다."),
        (TooManyAttendees, json!({"max": 50}), "한 번에 최대 50명(곳)까지 물을 수 있습니다."),
        (WindowTooLong, json!({"maxDays": 366}), "한 번에 최대 366일까지 물을 수 있습니다."),
    ]
}

#[test]
fn every_error_code_has_a_message_in_both_languages_with_and_without_details() {
    let name = |code: ErrorCode| code.name();
    let samples = with_details();
    assert!(ErrorCode::ALL.len() > 40);
    for code in ErrorCode::ALL {
        for lang in Lang::ALL {
            let plain = message(lang, &name(*code), &json!({}), "");
            assert!(plain.as_ref().is_some_and(|m| !m.is_empty()), "{lang:?}: {code:?} has no message without details");
            // A text that takes arguments is checked with the details its
            // refusals carry: its whole text, not the plain fallback.
            let takes_arguments = I18n::new(lang).t(&format!("api-{}", name(*code))).starts_with(MISSING);
            if takes_arguments {
                assert!(samples.iter().any(|(c, ..)| c == code), "{code:?} takes arguments: add its details above");
            }
        }
    }
    for (code, details, korean) in &samples {
        let name = code.name();
        assert_eq!(message(Lang::Ko, &name, details, "").as_deref(), Some(*korean), "{code:?} {details}");
        let en = message(Lang::En, &name, details, "").unwrap_or_else(|| panic!("{code:?}: no English with {details}"));
        assert!(!en.chars().any(is_hangul) && !en.contains(MISSING), "{code:?}: {en}");
        // Where the Korean reads the details, so does the English: both
        // write their whole text, neither falls back to the plain one.
        if message(Lang::Ko, &name, &json!({}), "").as_deref() != Some(*korean) {
            let en_plain = message(Lang::En, &name, &json!({}), "");
            assert_ne!(Some(&en), en_plain.as_ref(), "{code:?}: English falls back to its plain text with {details}");
        }
    }
}

/// The code makes a refusal with the details its words need: the message
/// made in code is the catalogue's whole text, never the plain fallback.
#[test]
fn refusals_made_in_code_carry_what_their_words_need() {
    use chrono::{TimeZone, Utc};
    use yeyak::catalogue::domain::{unknown_room, Bookable, LinkedRooms};
    use yeyak::rooms::domain::{Status, TimeRange};
    let t = |h, m, s| Utc.with_ymd_and_hms(2030, 1, 7, h, m, s).unwrap();
    let errors: Vec<(ApiError, &str)> = vec![
        (
            TimeRange::new(t(10, 0, 1), t(11, 0, 0)).unwrap_err(),
            "예약 시간은 분 단위로 정해야 합니다 (초는 0이어야 합니다).",
        ),
        (TimeRange::new(t(11, 0, 0), t(10, 0, 0)).unwrap_err(), "끝나는 시간은 시작 시간보다 뒤여야 합니다."),
        (
            TimeRange::new(t(9, 0, 0), t(11, 0, 0)).unwrap().ensure_at_most(60).unwrap_err(),
            "예약은 최대 60분까지 할 수 있습니다.",
        ),
        (
            TimeRange::new(t(9, 0, 0), t(11, 0, 0)).unwrap().ensure_not_past(t(10, 0, 0)).unwrap_err(),
            "지난 시간은 예약할 수 없습니다.",
        ),
        (yeyak::rooms::access::not_organizer(), "예약한 사람(또는 관리자)만 바꿀 수 있습니다."),
        (yeyak::rooms::store::invalid_state(Status::Cancelled), "이미 취소된 예약입니다."),
        (yeyak::rooms::store::invalid_state(Status::Pending), "승인을 기다리는 예약입니다."),
        (unknown_room("Z9"), "알 수 없는 회의실입니다: Z9"),
        (ApiError::room_time_taken(), "이미 예약된 시간입니다"),
    ];
    let room = |code: &str, suite: Option<&str>, position, members: &[&str]| Bookable {
        code: code.to_owned(),
        suite: suite.map(str::to_owned),
        position,
        max_duration_minutes: 720,
        horizon_days: None,
        approval_required: false,
        check_in_required: false,
        suite_members: members.iter().map(|m| (*m).to_owned()).collect(),
        area: Default::default(),
        kind: Default::default(),
        assigned_to: None,
    };
    let asked = ["A".to_owned(), "C".to_owned()];
    let abc = ["A", "B", "C"];
    let skipped =
        LinkedRooms::link(&asked, vec![room("A", Some("S"), 1, &abc), room("C", Some("S"), 3, &abc)]).unwrap_err();
    let apart = LinkedRooms::link(&asked, vec![room("A", Some("S"), 1, &abc), room("C", None, 3, &[])]).unwrap_err();
    let mut errors = errors;
    errors.push((
        skipped,
        "이어진 회의실만 함께 예약할 수 있습니다 (예: A+B, B+C, A+B+C). A+C처럼 가운데를 건너뛸 수 없습니다.",
    ));
    errors.push((
        apart,
        "이어진 회의실만 함께 예약할 수 있습니다. 서로 다른 묶음이거나 묶음이 없는 방은 따로 예약해 주세요.",
    ));
    for (err, korean) in errors {
        assert_eq!(err.message, korean, "{:?} {}", err.code, err.details);
        let en = message(Lang::En, &err.code.name(), &err.details, &err.message).unwrap();
        let en_plain = message(Lang::En, &err.code.name(), &json!({}), "").unwrap();
        assert!(!en.chars().any(is_hangul), "{en}");
        if err.details.as_object().is_some_and(|d| d.keys().any(|k| k != "field")) {
            assert_ne!(en, en_plain, "{:?}: the details lack what the English text needs", err.code);
        }
    }
}
