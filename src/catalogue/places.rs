//! The places on an area's floor plan on one date (SPEC §28): each placed
//! room and desk with its state — free, booked, yours, assigned, away — in
//! one statement however many places (a plan of 1,000 desks is one query,
//! each place probing the exclusion constraint's GiST index once).

use chrono::{DateTime, NaiveDate, Utc};
use diesel::sql_types::{Bool, Date, Double, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::Serialize;

use super::domain::RoomKind;
use crate::db::cached::CacheExt;
use crate::db::Conn;

/// What a place is on a date, for the person looking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PlaceState {
    /// Nobody holds it that day: it may be booked.
    Free,
    /// Someone else holds it (a desk booked on its holder's away day too).
    Booked,
    /// The person looking holds it.
    Yours,
    /// A desk assigned to someone who is in that day.
    Assigned,
    /// A desk whose holder is away that day: others may book it.
    Away,
}

impl PlaceState {
    pub fn as_str(self) -> &'static str {
        match self {
            PlaceState::Free => "free",
            PlaceState::Booked => "booked",
            PlaceState::Yours => "yours",
            PlaceState::Assigned => "assigned",
            PlaceState::Away => "away",
        }
    }

    /// Whether the person looking may book it that day.
    pub fn bookable(self) -> bool {
        matches!(self, PlaceState::Free | PlaceState::Away)
    }

    /// The one rule of a place's state: a booking decides first (the
    /// looker's own, then anyone's), then an assignment and its holder's
    /// away days.
    pub fn decide(booked: Option<bool>, assigned: bool, away: bool) -> PlaceState {
        match (booked, assigned, away) {
            (Some(true), _, _) => PlaceState::Yours,
            (Some(false), _, _) => PlaceState::Booked,
            (None, true, true) => PlaceState::Away,
            (None, true, false) => PlaceState::Assigned,
            (None, false, _) => PlaceState::Free,
        }
    }
}

/// One mark of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Place {
    pub code: String,
    #[serde(skip)]
    pub name: String,
    pub kind: RoomKind,
    /// Fractions 0-1 of the plan's width and height.
    pub x: f64,
    pub y: f64,
    pub state: PlaceState,
}

#[derive(QueryableByName)]
struct PlaceRow {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    kind: RoomKind,
    #[diesel(sql_type = Double)]
    plan_x: f64,
    #[diesel(sql_type = Double)]
    plan_y: f64,
    #[diesel(sql_type = Bool)]
    assigned: bool,
    #[diesel(sql_type = Bool)]
    away: bool,
    /// Null: nobody holds it; else whether the looker does.
    #[diesel(sql_type = Nullable<Bool>)]
    booked_by_looker: Option<bool>,
}

/// The active placed rooms and desks of `area` on `date` (its day is
/// `[from, to)`), in position order; `looker` is the organizer digest of
/// who asks ("yours"), if anyone.
pub async fn on_date(
    conn: &mut Conn,
    area: &str,
    date: NaiveDate,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    looker: Option<&str>,
) -> diesel::QueryResult<Vec<Place>> {
    let rows: Vec<PlaceRow> = diesel::sql_query(PLACES_SQL)
        .bind::<Text, _>(area)
        .bind::<Date, _>(date)
        .bind::<Timestamptz, _>(from)
        .bind::<Timestamptz, _>(to)
        .bind::<Nullable<Text>, _>(looker)
        .cached()
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| Place {
            state: PlaceState::decide(r.booked_by_looker, r.assigned, r.away),
            code: r.code,
            name: r.name,
            kind: r.kind,
            x: r.plan_x,
            y: r.plan_y,
        })
        .collect())
}

/// `bool_or` over the place's live copies that day: null when there are
/// none. Probes `reservation_room_meetings_apart`'s index (room, range).
const PLACES_SQL: &str = "
SELECT r.code, r.name, r.kind, r.plan_x, r.plan_y, r.assigned_to IS NOT NULL AS assigned,
       EXISTS (SELECT 1 FROM staff_away w
                WHERE w.staff_id = r.assigned_to AND $2 BETWEEN w.from_date AND w.to_date) AS away,
       (SELECT bool_or(p.organizer_digest IS NOT DISTINCT FROM $5)
          FROM reservation_room rr JOIN reservation p ON p.id = rr.reservation_id
         WHERE rr.room = r.code AND rr.active
           AND tstzrange(rr.starts_at, rr.ends_at, '[)') && tstzrange($3, $4, '[)')) AS booked_by_looker
  FROM room r
 WHERE r.area = $1 AND r.active AND r.plan_x IS NOT NULL AND r.plan_y IS NOT NULL
 ORDER BY r.position, r.code";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_booking_decides_before_an_assignment() {
        assert_eq!(PlaceState::decide(Some(false), true, true), PlaceState::Booked);
        assert_eq!(PlaceState::decide(Some(true), true, false), PlaceState::Yours);
        assert_eq!(PlaceState::decide(None, true, true), PlaceState::Away);
        assert_eq!(PlaceState::decide(None, true, false), PlaceState::Assigned);
        assert_eq!(PlaceState::decide(None, false, true), PlaceState::Free);
    }
}
