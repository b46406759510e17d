//! The area form of `/admin/areas` (SPEC §24, §29): its fields read into
//! the catalogue's own requests — the JSON fields in snake_case, working
//! hours as the text `mon 09:00-18:00, tue 09:00-18:00` — and the values it
//! shows: an area's, a blank one's, or what was typed when refused.

use crate::catalogue::areas::{Area, AreaPatch, AreaPatchBody, NewArea, NewAreaBody};
use crate::catalogue::hours::WorkingHours;
use crate::error::ApiError;
use crate::idempotency::IdempotencyKey;
use crate::web::form::checked;
use crate::web::FormData;

/// Time zones the field offers as you type (any IANA name is taken).
pub const COMMON_ZONES: &[&str] = &[
    "Asia/Seoul",
    "Asia/Tokyo",
    "Asia/Shanghai",
    "Asia/Singapore",
    "Asia/Kolkata",
    "Asia/Dubai",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Paris",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "UTC",
];

fn text(form: &FormData, name: &str) -> Option<String> {
    Some(form.get(name).trim().to_owned()).filter(|t| !t.is_empty())
}

fn position(form: &FormData) -> Result<Option<i64>, ApiError> {
    match form.get("position").trim() {
        "" => Ok(None),
        raw => raw.parse::<i64>().map(Some).map_err(|_| ApiError::malformed("position", "must be a whole number")),
    }
}

/// The `working_hours` text, as stored (the field named when it is wrong).
fn hours(form: &FormData) -> Result<serde_json::Value, ApiError> {
    WorkingHours::parse_text("working_hours", form.get("working_hours")).map(|h| h.to_json())
}

/// A new area: an empty name is the code, an empty position the last one.
pub fn new_area(form: &FormData) -> Result<NewArea, ApiError> {
    let mut new = NewArea::parse(NewAreaBody {
        code: form.get("code").to_owned(),
        name: text(form, "name"),
        time_zone: text(form, "time_zone"),
        working_hours: None,
        holiday_calendar: text(form, "holiday_calendar"),
        restrict_to_working_hours: Some(checked(form, "restrict_to_working_hours")),
        closed_on_holidays: Some(checked(form, "closed_on_holidays")),
        position: position(form)?,
    })?;
    new.working_hours = Some(hours(form)?);
    Ok(new)
}

/// The edit form sends every field: an empty time zone is the
/// installation's, an empty calendar none, an empty position unchanged.
pub fn area_patch(form: &FormData) -> Result<AreaPatch, ApiError> {
    let mut patch = AreaPatch::parse(AreaPatchBody {
        name: Some(form.get("name").to_owned()),
        time_zone: Some(text(form, "time_zone")),
        working_hours: None,
        holiday_calendar: Some(text(form, "holiday_calendar")),
        restrict_to_working_hours: Some(checked(form, "restrict_to_working_hours")),
        closed_on_holidays: Some(checked(form, "closed_on_holidays")),
        position: position(form)?,
    })?;
    patch.working_hours = Some(hours(form)?);
    Ok(patch)
}

/// The values of an area form (as typed, kept when refused).
pub struct AreaForm {
    pub code: String,
    /// The code of an existing area cannot change.
    pub code_locked: bool,
    pub name: String,
    pub time_zone: String,
    pub working_hours: String,
    /// The chosen calendar's code, empty for none.
    pub holiday_calendar: String,
    pub restrict_to_working_hours: bool,
    pub closed_on_holidays: bool,
    pub position: String,
    pub idempotency_key: String,
}

fn fresh_key() -> String {
    IdempotencyKey::generate().as_str().to_owned()
}

impl AreaForm {
    pub(super) fn of(area: &Area) -> Self {
        AreaForm {
            code: area.code.clone(),
            code_locked: true,
            name: area.name.clone(),
            time_zone: area.time_zone.clone(),
            working_hours: WorkingHours::from_json(&area.working_hours).to_text(),
            holiday_calendar: area.holiday_calendar.clone().unwrap_or_default(),
            restrict_to_working_hours: area.restrict_to_working_hours,
            closed_on_holidays: area.closed_on_holidays,
            position: area.position.to_string(),
            idempotency_key: fresh_key(),
        }
    }

    /// What was typed, with a fresh key: a refused form ran nothing, and
    /// its corrected version must not be taken for a resubmission.
    pub(super) fn kept(form: &FormData) -> Self {
        AreaForm {
            code: form.get("code").to_owned(),
            code_locked: false,
            name: form.get("name").to_owned(),
            time_zone: form.get("time_zone").to_owned(),
            working_hours: form.get("working_hours").to_owned(),
            holiday_calendar: form.get("holiday_calendar").to_owned(),
            restrict_to_working_hours: checked(form, "restrict_to_working_hours"),
            closed_on_holidays: checked(form, "closed_on_holidays"),
            position: form.get("position").to_owned(),
            idempotency_key: fresh_key(),
        }
    }

    /// An empty form in the installation's zone with the default hours.
    pub(super) fn blank(home: chrono_tz::Tz) -> Self {
        AreaForm {
            code: String::new(),
            code_locked: false,
            name: String::new(),
            time_zone: home.name().to_owned(),
            working_hours: WorkingHours::default().to_text(),
            holiday_calendar: String::new(),
            restrict_to_working_hours: false,
            closed_on_holidays: false,
            position: String::new(),
            idempotency_key: fresh_key(),
        }
    }
}
