//! The day grid of the rooms page as numbers: rooms are columns, minutes are
//! rows, each booking a block placed and sized at minute precision (linked
//! bookings span their rooms). No I/O; the template turns this into HTML.

use chrono::{DateTime, NaiveDate, NaiveTime, Timelike, Utc};
use chrono_tz::Tz;

use crate::catalogue::domain::Room;
use crate::i18n::I18n;
use crate::rooms::Booking;

/// The hours always shown; bookings outside widen the window.
pub const DAY_START_MIN: i32 = 7 * 60;
pub const DAY_END_MIN: i32 = 22 * 60;
/// Size of the free-time links in each column.
pub const SLOT_MIN: i32 = 30;
/// Most room columns one page lays out (an area with more shows the first ones).
pub const MAX_COLUMNS: usize = 400;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomColumn {
    pub code: String,
    pub name: String,
    pub capacity: i32,
    pub equipment: String,
    /// CSS grid column (1 is the hour labels).
    pub col: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HourMark {
    pub label: String,
    /// Row offset from the window start, in minutes.
    pub row: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub id: i64,
    pub title: String,
    pub organizer: String,
    pub rooms: String,
    pub time: String,
    pub col: usize,
    pub span: usize,
    pub row: i32,
    pub len: i32,
    pub highlighted: bool,
    /// Pending or released: shown, styled and labelled apart.
    pub status: Option<(&'static str, String)>,
    /// The first block of a booking carries its anchor id.
    pub anchor: bool,
}

/// A booking's setup or cleanup time in one room's column (SPEC §24):
/// shown as a labelled band, never offered as free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Band {
    /// `setup` or `cleanup` (the CSS class).
    pub kind: &'static str,
    pub label: String,
    pub col: usize,
    pub row: i32,
    pub len: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeSlot {
    pub room: String,
    pub col: usize,
    pub row: i32,
    pub len: i32,
    pub start: String,
    pub end: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayGrid {
    pub rows: i32,
    pub rooms: Vec<RoomColumn>,
    pub hours: Vec<HourMark>,
    pub blocks: Vec<Block>,
    pub bands: Vec<Band>,
    pub free: Vec<FreeSlot>,
}

fn hhmm(min: i32) -> String {
    if min >= 1440 {
        return "24:00".into();
    }
    format!("{:02}:{:02}", min / 60, min % 60)
}

/// Minutes since the local midnight of `date`, clipped to the day.
fn local_minute(t: DateTime<Utc>, tz: Tz, date: NaiveDate) -> i32 {
    let local = t.with_timezone(&tz);
    let days = (local.date_naive() - date).num_days();
    let min = days * 1440 + i64::from(local.hour() * 60 + local.minute());
    min.clamp(0, 1440) as i32
}

/// Lays out `bookings` (active ones of the day) for `rooms`; `now_min` is the
/// current minute when `date` is today (no free links before it), `None` for
/// future days, or `Some(1440)` for past days.
pub fn layout(
    i18n: &I18n,
    rooms: &[Room],
    bookings: &[Booking],
    tz: Tz,
    date: NaiveDate,
    highlight: Option<i64>,
    now_min: Option<i32>,
) -> DayGrid {
    let shown = |b: &&Booking| b.rooms.iter().any(|code| rooms.iter().any(|r| &r.code == code));
    let bookings: Vec<&Booking> = bookings.iter().filter(shown).collect();
    let spans: Vec<(i32, i32)> =
        bookings.iter().map(|b| (local_minute(b.starts_at, tz, date), local_minute(b.ends_at, tz, date))).collect();
    let first = spans.iter().map(|s| s.0 / 60 * 60).min().unwrap_or(DAY_START_MIN).min(DAY_START_MIN);
    let last = spans.iter().map(|s| (s.1 + 59) / 60 * 60).max().unwrap_or(DAY_END_MIN).max(DAY_END_MIN);
    let columns: Vec<RoomColumn> = rooms
        .iter()
        .enumerate()
        .map(|(i, r)| RoomColumn {
            code: r.code.clone(),
            name: r.name.clone(),
            capacity: r.capacity,
            equipment: r.equipment.join(", "),
            col: i + 2,
        })
        .collect();
    let col_of = |code: &str| columns.iter().find(|c| c.code == code).map(|c| c.col);

    let mut blocks = Vec::new();
    let mut bands = Vec::new();
    let mut busy: Vec<Vec<(i32, i32)>> = vec![Vec::new(); columns.len()];
    for (b, &(s, e)) in bookings.iter().zip(&spans) {
        for (i, code) in b.rooms.iter().enumerate() {
            let Some(col) = col_of(code) else { continue };
            let before = b.buffers_before.get(i).copied().unwrap_or(0);
            let after = b.buffers_after.get(i).copied().unwrap_or(0);
            for (kind, key, from, to) in
                [("setup", "day-band-setup", s - before, s), ("cleanup", "day-band-cleanup", e, e + after)]
            {
                let (from, to) = (from.clamp(first, last), to.clamp(first, last));
                if to > from {
                    busy[col - 2].push((from, to));
                    bands.push(Band { kind, label: i18n.t(key), col, row: from - first, len: to - from });
                }
            }
        }
        let mut cols: Vec<usize> = b.rooms.iter().filter_map(|r| col_of(r)).collect();
        cols.sort_unstable();
        for c in &cols {
            busy[c - 2].push((s, e));
        }
        // One block per run of neighbouring columns: a linked booking spans
        // its rooms, and never a column it does not hold.
        let status = match b.status {
            crate::rooms::domain::Status::Pending => Some(("pending", i18n.t("status-pending"))),
            crate::rooms::domain::Status::Released => Some(("released", i18n.t("history-released"))),
            _ => None,
        };
        for (i, run) in cols.chunk_by(|a, b| b == &(a + 1)).enumerate() {
            blocks.push(Block {
                id: b.id,
                title: b.title.clone(),
                organizer: b.shown_organizer().into_owned(),
                rooms: b.rooms.join("+"),
                time: format!(
                    "{}–{}",
                    b.starts_at.with_timezone(&tz).format("%H:%M"),
                    b.ends_at.with_timezone(&tz).format("%H:%M")
                ),
                col: run[0],
                span: run.len(),
                row: s - first,
                len: (e - s).max(1),
                highlighted: highlight == Some(b.id),
                status: status.clone(),
                anchor: i == 0,
            });
        }
    }

    let from = now_min.map_or(first, |n| n.max(first));
    let mut free = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        let mut start = (first + SLOT_MIN - 1) / SLOT_MIN * SLOT_MIN;
        while start + SLOT_MIN <= last {
            let end = start + SLOT_MIN;
            let taken = busy[i].iter().any(|&(s, e)| s < end && start < e);
            if start >= from && !taken {
                free.push(FreeSlot {
                    room: column.code.clone(),
                    col: column.col,
                    row: start - first,
                    len: SLOT_MIN,
                    start: hhmm(start),
                    end: hhmm(end),
                });
            }
            start = end;
        }
    }

    let hours = (first / 60..last / 60).map(|h| HourMark { label: hhmm(h * 60), row: h * 60 - first }).collect();
    DayGrid { rows: last - first, rooms: columns, hours, blocks, bands, free }
}

/// "HH:MM" on `date` in `tz` as an instant (the earliest, if the zone repeats it).
pub fn local_instant(tz: Tz, date: NaiveDate, time: NaiveTime) -> Option<DateTime<Utc>> {
    use chrono::TimeZone;
    tz.from_local_datetime(&date.and_time(time)).earliest().map(|t| t.with_timezone(&Utc))
}

/// The stylesheet that places blocks: one class per minute offset and length,
/// per column and span, served from our own origin so that the page needs no
/// inline styles under `Content-Security-Policy: default-src 'self'`.
pub fn placement_css() -> String {
    let mut css = String::with_capacity(96 * 1024);
    for m in 0..=1440 {
        css.push_str(&format!(".r{m}{{grid-row-start:{}}}", m + 2));
    }
    for l in 1..=1440 {
        css.push_str(&format!(".h{l}{{grid-row-end:span {l}}}"));
    }
    for n in (60..=1440).step_by(60) {
        css.push_str(&format!(".rows{n}{{grid-template-rows:auto repeat({n},var(--minute))}}"));
    }
    for c in 1..=MAX_COLUMNS + 1 {
        css.push_str(&format!(".c{c}{{grid-column-start:{c}}}.w{c}{{grid-column-end:span {c}}}"));
    }
    // A few rooms share the width; many get a readable minimum each and the
    // grid scrolls sideways under a sticky time column.
    for n in 1..=MAX_COLUMNS {
        // Many columns: the grid is as wide as they are (not its wrapper), so
        // that a sticky item's row really spans every column.
        let (width, wide) =
            if n <= 4 { ("minmax(0,1fr)", "") } else { ("minmax(8rem,8rem)", ";width:max-content;min-width:100%") };
        css.push_str(&format!(".cols{n}{{grid-template-columns:var(--timecol) repeat({n},{width}){wide}}}"));
    }
    css
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;
    use chrono::TimeZone;

    fn rooms() -> Vec<Room> {
        ["A", "B", "C"]
            .iter()
            .enumerate()
            .map(|(i, c)| Room {
                code: c.to_string(),
                name: c.to_string(),
                area: "본관".into(),
                capacity: 8,
                equipment: vec![],
                suite: Some("ABC".into()),
                position: i as i32 + 1,
                check_in_required: false,
                approval_required: false,
                max_duration_minutes: 720,
                horizon_days: None,
                active: true,
                buffer_before_minutes: 0,
                buffer_after_minutes: 0,
                time_zone: "Asia/Seoul".to_owned(),
                kind: Default::default(),
                assigned_to: None,
                x: None,
                y: None,
            })
            .collect()
    }

    fn booking(id: i64, rooms: &[&str], s: (u32, u32), e: (u32, u32)) -> Booking {
        let tz = chrono_tz::Asia::Seoul;
        let at = |(h, m): (u32, u32)| tz.with_ymd_and_hms(2030, 1, 7, h, m, 0).unwrap().with_timezone(&Utc);
        Booking::example(id, &format!("b{id}"), rooms, at(s), at(e))
    }

    #[test]
    fn blocks_sit_at_minute_precision_and_span_linked_rooms() {
        let date = NaiveDate::from_ymd_opt(2030, 1, 7).unwrap();
        let g = layout(
            &I18n::new(Lang::Ko),
            &rooms(),
            &[booking(1, &["A", "B"], (9, 5), (10, 20))],
            chrono_tz::Asia::Seoul,
            date,
            Some(1),
            None,
        );
        assert_eq!(g.rows, 15 * 60);
        let b = &g.blocks[0];
        assert_eq!((b.col, b.span, b.row, b.len, b.highlighted), (2, 2, 2 * 60 + 5, 75, true));
        assert_eq!(b.time, "09:05–10:20");
        // A is busy 09:05-10:20: the 09:00, 09:30, 10:00 slots of A and B are not free; C's are.
        let free_at = |room: &str, start: &str| g.free.iter().any(|f| f.room == room && f.start == start);
        assert!(!free_at("A", "09:00") && !free_at("B", "10:00") && free_at("C", "09:00"));
        assert!(free_at("A", "10:30") && free_at("A", "08:30"));
        assert_eq!(g.hours.first().unwrap().label, "07:00");
        assert_eq!(g.hours.len(), 15);
    }

    #[test]
    fn buffers_are_labelled_bands_of_their_own_room_and_never_free() {
        let date = NaiveDate::from_ymd_opt(2030, 1, 7).unwrap();
        let mut b = booking(1, &["A", "B"], (10, 0), (11, 0));
        b.buffers_before = vec![15, 0];
        b.buffers_after = vec![30, 0];
        let g = layout(&I18n::new(Lang::Ko), &rooms(), &[b], chrono_tz::Asia::Seoul, date, None, None);
        let bands: Vec<(&str, &str, usize, i32, i32)> =
            g.bands.iter().map(|d| (d.kind, d.label.as_str(), d.col, d.row, d.len)).collect();
        assert_eq!(bands, vec![("setup", "준비 시간", 2, 165, 15), ("cleanup", "정리 시간", 2, 240, 30)], "B has none");
        let free_at = |room: &str, start: &str| g.free.iter().any(|f| f.room == room && f.start == start);
        assert!(!free_at("A", "09:30") && !free_at("A", "11:00") && free_at("A", "11:30"));
        assert!(free_at("B", "09:30") && free_at("B", "11:00"));
    }

    #[test]
    fn early_and_late_bookings_widen_the_window() {
        let date = NaiveDate::from_ymd_opt(2030, 1, 7).unwrap();
        let g = layout(
            &I18n::new(Lang::Ko),
            &rooms(),
            &[booking(1, &["C"], (6, 30), (7, 0)), booking(2, &["C"], (22, 0), (23, 15))],
            chrono_tz::Asia::Seoul,
            date,
            None,
            None,
        );
        assert_eq!(g.hours.first().unwrap().label, "06:00");
        assert_eq!(g.rows, 18 * 60);
        assert_eq!(g.blocks[0].row, 30);
    }

    #[test]
    fn no_free_links_in_the_past() {
        let date = NaiveDate::from_ymd_opt(2030, 1, 7).unwrap();
        let g = layout(&I18n::new(Lang::Ko), &rooms(), &[], chrono_tz::Asia::Seoul, date, None, Some(12 * 60 + 10));
        assert!(g.free.iter().all(|f| f.start.as_str() >= "12:30"));
    }
}
