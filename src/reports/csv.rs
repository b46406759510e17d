//! The reports as CSV a spreadsheet program opens as it is: UTF-8 with a
//! byte-order mark (so Korean is read as UTF-8), RFC 4180 (CRLF, fields
//! quoted when they hold a comma, quote or line break; quotes doubled).

use super::domain::{hours, BookingLine, Utilisation};

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

fn writer() -> ::csv::Writer<Vec<u8>> {
    ::csv::WriterBuilder::new().terminator(::csv::Terminator::CRLF).from_writer(BOM.to_vec())
}

/// Writing to memory only fails on a bug (a record of the wrong length).
fn finish(w: ::csv::Writer<Vec<u8>>) -> Vec<u8> {
    w.into_inner().expect("writing CSV to memory")
}

/// Text a person typed, defused so a spreadsheet never runs it as a formula
/// (OWASP "CSV injection"): a leading `= + - @`, tab or carriage return gets
/// a leading apostrophe, which spreadsheets show as text.
fn text(value: &str) -> std::borrow::Cow<'_, str> {
    if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{value}").into()
    } else {
        value.into()
    }
}

pub const UTILISATION_HEADER: [&str; 10] = [
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
];

/// One row per active room, in the page's order.
pub fn utilisation(report: &Utilisation) -> Vec<u8> {
    let mut w = writer();
    w.write_record(UTILISATION_HEADER).expect("writing CSV to memory");
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
        ])
        .expect("writing CSV to memory");
    }
    finish(w)
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

/// One row per booking; times local (`YEYAK_TIMEZONE`), empty when unset.
pub fn bookings(lines: &[BookingLine]) -> Vec<u8> {
    let mut w = writer();
    w.write_record(BOOKINGS_HEADER).expect("writing CSV to memory");
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
        ])
        .expect("writing CSV to memory");
    }
    finish(w)
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
}
