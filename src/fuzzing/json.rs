//! JSON bodies, read as `ApiJson` reads them and then into the domain values.

use serde::de::DeserializeOwned;

use crate::catalogue::domain::{NewRoom, NewRoomBody, RoomPatch, RoomPatchBody};
use crate::rooms::domain::{RequestedRooms, TimeRange, Title};
use crate::rooms::store::decide::Decision;
use crate::series::domain::Recurrence;

use super::inputs::{booking_range, occurrences, HOME};

// -------------------------------------------------------------------- JSON

/// A JSON body as `http::extract::ApiJson` reads it: at most its limit,
/// blank as `{}`, UTF-8, an object, deserialized with the failing field named.
fn json<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    if data.len() > crate::http::extract::JSON_LIMIT {
        return None;
    }
    let body: &[u8] = if data.iter().all(u8::is_ascii_whitespace) { b"{}" } else { data };
    let text = std::str::from_utf8(body).ok()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize(de) {
        Ok(value) => Some(value),
        Err(e) => {
            let _ = (e.inner().to_string(), e.path().to_string());
            None
        }
    }
}

/// `POST /api/bookings`, `PATCH /api/bookings/{id}`, cancel and the
/// approval decision (`http::bookings`), into their domain values.
pub fn json_booking(data: &[u8]) {
    use crate::http::bookings::{CancelBody, CreateBody, DecisionBody, MoveBody};
    if let Some(body) = json::<CreateBody>(data) {
        let _ = body.title();
        let _ = RequestedRooms::parse(&body.rooms);
        let _ = Title::parse_field("organizerName", body.organizer_name.as_deref().unwrap_or("fuzz"));
        if let Ok(crate::rooms::desks::When::Range(range)) = body.when() {
            booking_range(&range);
        }
    }
    if let Some(body) = json::<MoveBody>(data) {
        let _ = body.title.as_deref().map(Title::parse);
        if let Ok(range) = TimeRange::new(body.starts_at, body.ends_at) {
            booking_range(&range);
        }
    }
    let _ = json::<CancelBody>(data);
    if let Some(body) = json::<DecisionBody>(data) {
        let _ = Decision::parse(true, body.reason.as_deref());
    }
}

/// `POST /api/series` (with its occurrences), `PATCH /api/series/{id}` and
/// its cancel (`http::series`).
pub fn json_series(data: &[u8]) {
    use crate::http::series::{hhmm, CancelSeriesBody, CreateSeriesBody, UpdateSeriesBody};
    if let Some(body) = json::<CreateSeriesBody>(data) {
        let _ = Title::parse(&body.title);
        let _ = RequestedRooms::parse(&body.rooms);
        if let (Ok(first), Ok(recurrence)) =
            (TimeRange::new(body.starts_at, body.ends_at), Recurrence::parse(&body.recurrence, HOME))
        {
            occurrences(&first, &recurrence, HOME);
        }
    }
    if let Some(body) = json::<UpdateSeriesBody>(data) {
        let _ = body.title.as_deref().map(Title::parse);
        let _ = hhmm("startTime", body.start_time.as_deref());
        let _ = hhmm("endTime", body.end_time.as_deref());
    }
    let _ = json::<CancelSeriesBody>(data);
}

/// `POST /api/rooms`, `PATCH /api/rooms/{code}` and retire.
pub fn json_room(data: &[u8]) {
    if let Some(body) = json::<NewRoomBody>(data) {
        let _ = NewRoom::parse(body);
    }
    if let Some(body) = json::<RoomPatchBody>(data) {
        let _ = RoomPatch::parse(body);
    }
    let _ = json::<crate::http::rooms::RetireBody>(data);
}

/// The capacity bodies (`http::capacity`): a new resource, a hold or a
/// waitlist join, a hold's confirm or cancel, an extension, a revision.
pub fn json_capacity(data: &[u8]) {
    use crate::capacity::domain::{parse_revision, ExtendBy, NewResource, NewResourceBody, UnitsAsk};
    use crate::http::capacity::{ExtendBody, HoldBody, RevisionBody, TransitionBody};
    if let Some(body) = json::<NewResourceBody>(data) {
        let _ = NewResource::parse(body);
    }
    if let Some(body) = json::<HoldBody>(data) {
        let _ = UnitsAsk::parse(body.quantity, body.expected_resource_revision, body.policy_version);
    }
    if let Some(body) = json::<TransitionBody>(data) {
        let _ = body.parse(1);
    }
    if let Some(body) = json::<ExtendBody>(data) {
        let _ = parse_revision("expectedRevision", body.expected_revision);
        let _ = ExtendBy::parse(body.extend_by_seconds);
    }
    if let Some(body) = json::<RevisionBody>(data) {
        let _ = body.revision();
    }
}
