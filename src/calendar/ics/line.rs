//! RFC 5545 content lines (§3.1): CRLF, every physical line at most 75
//! octets including a continuation's leading space, never splitting a UTF-8
//! character; TEXT escaped (§3.3.11) and parameter values quoted when they
//! hold `:`, `;` or `,` (§3.2), each exactly once (SPEC §20). Written
//! straight into one buffer: a feed of 2,000 events is one allocation that
//! grows, not a tree of properties per event.

use crate::text::is_forbidden;

const LIMIT: usize = 75;

/// An iCalendar text being written.
#[derive(Debug, Default)]
pub struct Lines {
    out: String,
    /// Octets on the current physical line.
    col: usize,
}

impl Lines {
    pub fn with_capacity(bytes: usize) -> Self {
        Lines { out: String::with_capacity(bytes), col: 0 }
    }

    pub fn finish(self) -> String {
        self.out
    }

    /// Appends to the current line, folding where it would pass 75 octets.
    fn put(&mut self, mut s: &str) {
        while !s.is_empty() {
            let room = LIMIT - self.col;
            if s.len() <= room {
                self.out.push_str(s);
                self.col += s.len();
                return;
            }
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.out.push_str(&s[..cut]);
            self.out.push_str("\r\n ");
            self.col = 1;
            s = &s[cut..];
        }
    }

    fn end(&mut self) {
        self.out.push_str("\r\n");
        self.col = 0;
    }

    /// `NAME:value` with the value as it is (names, dates, URIs yeyak
    /// makes); a control character cannot break the line, it is left out.
    pub fn raw(&mut self, name: &str, value: &str) {
        self.put(name);
        self.put(":");
        self.clean(value);
        self.end();
    }

    /// `NAME:value` with the value as TEXT (escaped).
    pub fn text(&mut self, name: &str, value: &str) {
        self.put(name);
        self.put(":");
        self.escaped(value);
        self.end();
    }

    /// `NAME;P1=v1;P2=v2:value`, parameter values quoted as needed, the
    /// value as it is (a cal-address).
    pub fn with_params(&mut self, name: &str, params: &[(&str, &str)], value: &str) {
        self.put(name);
        for (p, v) in params {
            self.put(";");
            self.put(p);
            self.put("=");
            self.param(v);
        }
        self.put(":");
        self.clean(value);
        self.end();
    }

    fn clean(&mut self, value: &str) {
        if value.chars().any(is_forbidden) {
            let kept: String = value.chars().filter(|c| !is_forbidden(*c)).collect();
            self.put(&kept);
        } else {
            self.put(value);
        }
    }

    /// A parameter value: no DQUOTE or control character can be written in
    /// one, so they are left out; quoted when it holds `:`, `;` or `,`.
    fn param(&mut self, value: &str) {
        let bad = |c: char| c == '"' || is_forbidden(c);
        let quote = value.contains([':', ';', ',']);
        if quote {
            self.put("\"");
        }
        if value.chars().any(bad) {
            let kept: String = value.chars().filter(|c| !bad(*c)).collect();
            self.put(&kept);
        } else {
            self.put(value);
        }
        if quote {
            self.put("\"");
        }
    }

    /// TEXT: `\`, `;`, `,` escaped, line breaks (rows stored before titles
    /// were one line) written as `\n`, other control characters left out.
    fn escaped(&mut self, value: &str) {
        let special = |b: u8| b < 0x20 || b == 0x7f || matches!(b, b'\\' | b';' | b',' | 0xc2 | 0xe2);
        if !value.bytes().any(special) {
            self.put(value);
            return;
        }
        let mut chars = value.chars().peekable();
        let mut run = String::new();
        while let Some(c) = chars.next() {
            let escape = match c {
                '\\' => Some("\\\\"),
                ';' => Some("\\;"),
                ',' => Some("\\,"),
                '\r' => {
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    Some("\\n")
                }
                '\n' | '\u{2028}' | '\u{2029}' | '\u{85}' => Some("\\n"),
                '\t' => None,
                c if is_forbidden(c) => Some(""),
                _ => None,
            };
            match escape {
                Some(e) => {
                    self.put(&run);
                    run.clear();
                    self.put(e);
                }
                None => run.push(c),
            }
        }
        self.put(&run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(f: impl FnOnce(&mut Lines)) -> String {
        let mut l = Lines::default();
        f(&mut l);
        l.finish()
    }

    #[test]
    fn folds_at_75_octets_on_character_boundaries() {
        let text = lines(|l| l.text("SUMMARY", &"가".repeat(100)));
        for line in text.trim_end_matches("\r\n").split("\r\n") {
            assert!(line.len() <= 75, "{}: {line}", line.len());
            assert!(std::str::from_utf8(line.as_bytes()).is_ok());
        }
        let unfolded = text.replace("\r\n ", "");
        assert_eq!(unfolded, format!("SUMMARY:{}\r\n", "가".repeat(100)));
        let exact = lines(|l| l.raw("X", &"a".repeat(73)));
        assert_eq!(exact, format!("X:{}\r\n", "a".repeat(73)), "75 octets fit on one line");
        let over = lines(|l| l.raw("X", &"a".repeat(74)));
        assert_eq!(over, format!("X:{}\r\n a\r\n", "a".repeat(73)));
    }

    #[test]
    fn text_is_escaped_once_and_parameters_quoted() {
        let text = lines(|l| l.text("SUMMARY", "a\\b;c,d:e\nf\r\ng\u{2028}h\u{1}i\tj"));
        assert_eq!(text, "SUMMARY:a\\\\b\\;c\\,d:e\\nf\\ng\\nhi\tj\r\n");
        let text = lines(|l| l.with_params("ATTENDEE", &[("CN", "김, \"민지\"\n"), ("CUTYPE", "ROOM")], "mailto:a@b"));
        assert_eq!(text, "ATTENDEE;CN=\"김, 민지\";CUTYPE=ROOM:mailto:a@b\r\n");
        for (v, quoted) in [("a:b", true), ("a;b", true), ("a,b", true), ("a b", false)] {
            let text = lines(|l| l.with_params("X", &[("CN", v)], "v"));
            let want = if quoted { format!("X;CN=\"{v}\":v\r\n") } else { format!("X;CN={v}:v\r\n") };
            assert_eq!(text, want);
        }
    }
}
