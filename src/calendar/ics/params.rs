//! Values for writers on the `icalendar` crate (the CalDAV members,
//! `dav::render`), which escapes TEXT properties itself and quotes
//! parameter values holding `:` or `;` (SPEC §20).

/// A parameter value for `CN=` (RFC 5545 §3.2): no DQUOTE or control
/// character can be written, so they are left out; quoted when it holds a
/// comma (the crate quotes values holding `:` or `;` itself, and would quote
/// an already quoted one again).
pub(crate) fn cn(name: &str) -> String {
    let clean: String = name.chars().filter(|c| *c != '"' && !crate::text::is_forbidden(*c)).collect();
    if clean.contains(',') && !clean.contains([':', ';']) {
        format!("\"{clean}\"")
    } else {
        clean
    }
}

/// A value on one logical line: line breaks (from rows stored before
/// titles were one line) become `\n`, which TEXT escaping writes as `\\n`;
/// other control characters cannot be written in TEXT and are left out.
pub(crate) fn one_line(s: &str) -> String {
    s.replace("\r\n", "\n")
        .chars()
        .filter_map(|c| match c {
            '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' => Some('\n'),
            '\n' | '\t' => Some(c),
            c if crate::text::is_forbidden(c) => None,
            c => Some(c),
        })
        .collect()
}
