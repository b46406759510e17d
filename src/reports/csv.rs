//! The reports as CSV a spreadsheet program opens as it is: UTF-8 with a
//! byte-order mark (so Korean is read as UTF-8), RFC 4180 (CRLF, quotes
//! doubled), and a cell quoted when it holds a comma, a quote, a line break
//! — or a semicolon, the separator of spreadsheets set to a European locale,
//! which would otherwise split the cell (SPEC §20).

use std::borrow::Cow;

use super::domain::{hours, BookingLine, Utilisation};

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The CSV being written: records of cells, each line ended by CRLF.
struct Writer(Vec<u8>);

impl Writer {
    fn new() -> Self {
        Writer(BOM.to_vec())
    }

    fn write_record<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        for (i, c) in cells.into_iter().enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            self.0.extend_from_slice(cell(c.as_ref()).as_bytes());
        }
        self.0.extend_from_slice(b"\r\n");
    }

    fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// One cell: quoted, quotes doubled, when it holds a separator (`,` or
/// `;`), a quote or a line break; as it is otherwise.
fn cell(value: &str) -> Cow<'_, str> {
    if value.contains([',', ';', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\"")).into()
    } else {
        value.into()
    }
}

/// Text a person typed, defused so a spreadsheet never runs it as a formula
/// (OWASP "CSV injection"): a leading `= + - @`, tab or carriage return gets
/// a leading apostrophe, which spreadsheets show as text.
fn text(value: &str) -> Cow<'_, str> {
    if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{value}").into()
    } else {
        value.into()
    }
}

pub const UTILISATION_HEADER: [&str; 12] = [
    "room",
    "name",
    "area",
    "booked_hours",
    "working_hours_booked",
    "working_hours",
    "utilisation_percent",
    "bookings",
    "cancellations",
    "releases",
    "released_hours",
    "reused_hours",
];

/// One row per active room, in the page's order.
pub fn utilisation(report: &Utilisation) -> Vec<u8> {
    let mut w = Writer::new();
    w.write_record(UTILISATION_HEADER);
    for r in &report.rooms {
        w.write_record([
            r.code.clone(),
            text(&r.name).into_owned(),
            text(&r.area).into_owned(),
            hours(r.booked_seconds),
            hours(r.working_booked_seconds),
            hours(r.working_seconds),
            format!("{:.1}", r.share_percent()),
            r.bookings.to_string(),
            r.cancellations.to_string(),
            r.releases.to_string(),
            hours(r.released_seconds),
            hours(r.reused_seconds),
        ]);
    }
    w.finish()
}

pub const BOOKINGS_HEADER: [&str; 12] = [
    "id",
    "starts_at",
    "ends_at",
    "rooms",
    "title",
    "organizer",
    "status",
    "series_id",
    "created_at",
    "checked_in_at",
    "released_at",
    "cancelled_at",
];

/// One row per booking; times local (`YEYAK_TIMEZONE`, or the zone of the
/// area asked for), empty when unset.
pub fn bookings(lines: &[BookingLine]) -> Vec<u8> {
    let mut w = Writer::new();
    w.write_record(BOOKINGS_HEADER);
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    for b in lines {
        w.write_record([
            b.id.to_string(),
            b.starts_at.clone(),
            b.ends_at.clone(),
            b.rooms.clone(),
            text(&b.title).into_owned(),
            text(&b.organizer).into_owned(),
            b.status.clone(),
            b.series_id.map(|s| s.to_string()).unwrap_or_default(),
            b.created_at.clone(),
            opt(&b.checked_in_at),
            opt(&b.released_at),
            opt(&b.cancelled_at),
        ]);
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_by_rfc_4180_after_a_bom_and_defuses_formulas() {
        let line = BookingLine {
            id: 7,
            starts_at: "2026-11-02 09:00:00".into(),
            ends_at: "2026-11-02 10:00:00".into(),
            rooms: "A+B".into(),
            title: "주간 \"회의\", 2부\n둘째 줄".into(),
            organizer: "=HYPERLINK(\"x\")".into(),
            status: "CONFIRMED".into(),
            series_id: None,
            created_at: "2026-11-01 12:00:00".into(),
            checked_in_at: None,
            released_at: None,
            cancelled_at: None,
        };
        let out = String::from_utf8(bookings(&[line])).unwrap();
        assert!(out.starts_with("\u{feff}id,starts_at,"));
        assert!(out.contains("\r\n7,2026-11-02 09:00:00,2026-11-02 10:00:00,A+B,\"주간 \"\"회의\"\", 2부\n둘째 줄\",\"'=HYPERLINK(\"\"x\"\")\",CONFIRMED,,"));
        assert!(out.ends_with(",,,\r\n"));
    }

    #[test]
    fn separators_quotes_and_line_breaks_are_quoted_formulas_defused() {
        for (raw, written) in [
            ("a;b", "\"a;b\""),
            ("a,b", "\"a,b\""),
            ("a\"b", "\"a\"\"b\""),
            ("a\nb", "\"a\nb\""),
            ("a\rb", "\"a\rb\""),
            ("plain 회의", "plain 회의"),
            ("=1+2;x", "\"'=1+2;x\""),
            ("-3", "'-3"),
            ("+1", "'+1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "\"'\rx\""),
        ] {
            assert_eq!(cell(&text(raw)), written, "{raw:?}");
        }
    }
}
