//! The closed set of error codes of SPEC §7 and their one mapping to an HTTP
//! status and JSON body. Database errors are classified in `db::DbError`.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use serde_json::{json, Value};

use crate::db::DbError;

/// Declares the closed set of codes and `ErrorCode::ALL` from one list.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $code:ident),* $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum ErrorCode {
            $($(#[$doc])* $code),*
        }

        impl ErrorCode {
            /// Every code, for the OpenAPI document.
            pub const ALL: &[ErrorCode] = &[$(ErrorCode::$code),*];
        }
    };
}

error_codes!(
    MalformedRequest,
    IdempotencyKeyRequired,
    Unauthenticated,
    Forbidden,
    OwnerMismatch,
    NotFound,
    IdempotencyFingerprintConflict,
    CommandInProgress,
    CapacityExhaustedOrStale,
    StaleRevision,
    PolicyVersionMismatch,
    ResourceClosed,
    InvalidState,
    CapacityAvailable,
    HoldExpired,
    OfferExpired,
    PayloadTooLarge,
    UnsupportedMediaType,
    AdmissionRejected,
    RoomTimeTaken,
    /// Only the rooms' setup or cleanup time overlaps (SPEC §24).
    RoomBufferTaken,
    RoomCombinationNotAllowed,
    UnknownRoom,
    InvalidTimeRange,
    TimeNotMinuteAligned,
    BookingTooLong,
    BookingInPast,
    BeyondHorizon,
    SeriesTooLong,
    InvalidRecurrence,
    VersionConflict,
    NotOrganizer,
    ResourceCodeTaken,
    QuotaExceeded,
    CheckInClosed,
    CheckInNotRequired,
    SeriesConflict,
    RoomCodeTaken,
    /// An area with this code exists (SPEC §24).
    AreaCodeTaken,
    /// Not an IANA time zone name (SPEC §24).
    InvalidTimeZone,
    /// A holiday calendar with this code exists (SPEC §24).
    HolidayCalendarCodeTaken,
    /// A booking outside its area's working hours, where they are enforced.
    OutsideWorkingHours,
    /// A booking on a holiday of an area closed on holidays.
    AreaClosed,
    RoomPositionTaken,
    SuiteInOtherArea,
    RoomHasFutureBookings,
    QuantityExceedsCapacity,
    AlreadyWaiting,
    HoldLifetimeExceeded,
    /// An API key for `staff` or `display`, the tenants of yeyak's own doors (SPEC §20).
    ReservedTenant,
    /// A calendar invitation that invites no room (SPEC §17).
    RoomRequired,
    /// A `calendar-multiget` naming more hrefs than one request may (SPEC §22).
    TooManyHrefs,
    /// A free-busy question naming more attendees than one request may (SPEC §22).
    TooManyAttendees,
    /// A free-busy window longer than one request may cover (SPEC §22).
    WindowTooLong,
    /// A calendar object's UID is another live object's of the collection (SPEC §23).
    UidConflict,
    /// Local accounts cannot be made while `YEYAK_PASSWORD_LOGIN` is not `on` (SPEC §25).
    PasswordLoginOff,
    /// A person with this username exists (any spelling).
    UsernameTaken,
    /// A restore of a series the sweeper did not cancel for no-shows (SPEC §25).
    SeriesNotStruck,
    /// The person already holds a desk in that half day (SPEC §28).
    DeskAlreadyBooked,
    /// The desk is assigned to someone who is not away that day (SPEC §28).
    DeskAssigned,
    /// A floor plan that is not a whole PNG, JPEG or WebP image within the limits (SPEC §28).
    InvalidImage,
    /// The person was erased already (SPEC §26).
    AlreadyErased,
    /// The break-glass admin (`YEYAK_ADMIN_USER`) is never erased (SPEC §26).
    BreakGlassAccount,
    DatabaseUnavailable,
    Internal,
);

impl ErrorCode {
    pub fn status(self) -> StatusCode {
        use ErrorCode::*;
        match self {
            MalformedRequest
            | IdempotencyKeyRequired
            | RoomCombinationNotAllowed
            | UnknownRoom
            | InvalidTimeRange
            | TimeNotMinuteAligned
            | BookingTooLong
            | BookingInPast
            | BeyondHorizon
            | SeriesTooLong
            | InvalidRecurrence
            | QuantityExceedsCapacity
            | ReservedTenant
            | TooManyHrefs
            | TooManyAttendees
            | WindowTooLong
            | InvalidTimeZone
            | PasswordLoginOff
            | OutsideWorkingHours
            | AreaClosed
            | InvalidImage => StatusCode::BAD_REQUEST,
            Unauthenticated => StatusCode::UNAUTHORIZED,
            Forbidden | OwnerMismatch | NotOrganizer | RoomRequired => StatusCode::FORBIDDEN,
            NotFound => StatusCode::NOT_FOUND,
            IdempotencyFingerprintConflict
            | CommandInProgress
            | CapacityExhaustedOrStale
            | StaleRevision
            | PolicyVersionMismatch
            | ResourceClosed
            | InvalidState
            | CapacityAvailable
            | RoomTimeTaken
            | RoomBufferTaken
            | VersionConflict
            | ResourceCodeTaken
            | QuotaExceeded
            | CheckInClosed
            | CheckInNotRequired
            | SeriesConflict
            | RoomCodeTaken
            | AreaCodeTaken
            | HolidayCalendarCodeTaken
            | RoomPositionTaken
            | SuiteInOtherArea
            | RoomHasFutureBookings
            | AlreadyWaiting
            | HoldLifetimeExceeded
            | UsernameTaken
            | SeriesNotStruck
            | UidConflict
            | DeskAlreadyBooked
            | DeskAssigned
            | AlreadyErased
            | BreakGlassAccount => StatusCode::CONFLICT,
            HoldExpired | OfferExpired => StatusCode::GONE,
            PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AdmissionRejected => StatusCode::TOO_MANY_REQUESTS,
            DatabaseUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The code as the JSON answer spells it (`ROOM_TIME_TAKEN`).
    pub fn name(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
    }

    /// Whether the same request may succeed later without change.
    pub fn retryable(self) -> bool {
        matches!(self, ErrorCode::CommandInProgress | ErrorCode::AdmissionRejected | ErrorCode::DatabaseUnavailable)
    }
}

/// An error answer: `{"code", "message", "details", "retryable", "currentRevision"?}`.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    /// Boxed: keeps `Result<_, ApiError>` small on every happy path.
    pub details: Box<Value>,
    pub current_revision: Option<i64>,
    pub retry_after_secs: Option<u32>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Box::new(json!({})),
            current_revision: None,
            retry_after_secs: None,
        }
    }

    /// An error worded by the catalogue (SPEC §19; words live in
    /// `src/i18n/locales`, codes in code): its message is the text of `code`
    /// with `details` as arguments in the default language, Korean — the
    /// text each door writes again in its caller's language from the same
    /// catalogue. `details` carries every value the text needs.
    pub fn worded(code: ErrorCode, details: Value) -> Self {
        let name = code.name();
        let message = crate::i18n::api::message(crate::i18n::Lang::default(), &name, &details, "").unwrap_or(name);
        Self::new(code, message).with_details(details)
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Box::new(details);
        self
    }

    pub fn with_current_revision(mut self, revision: i64) -> Self {
        self.current_revision = Some(revision);
        self
    }

    pub fn with_retry_after(mut self, secs: u32) -> Self {
        self.retry_after_secs = Some(secs);
        self
    }

    /// A 400 naming the offending field.
    pub fn malformed(field: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(ErrorCode::MalformedRequest, format!("invalid field `{field}`: {reason}"))
            .with_details(json!({ "field": field, "reason": reason }))
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found")).with_details(json!({ "what": what }))
    }

    /// An overlapping booking: "이미 예약된 시간입니다" (SPEC §7.2, §19), from the catalogue.
    pub fn room_time_taken() -> Self {
        Self::worded(ErrorCode::RoomTimeTaken, json!({}))
    }

    /// The meetings are apart but a room's buffers are not: "앞뒤 준비 시간과 겹칩니다" (SPEC §24).
    pub fn room_buffer_taken() -> Self {
        Self::worded(ErrorCode::RoomBufferTaken, json!({}))
    }

    /// One owner, one live (WAITING or OFFERED) entry per resource (SPEC §13);
    /// `entry_id` names it when known.
    pub fn already_waiting(entry_id: Option<i64>) -> Self {
        Self::new(ErrorCode::AlreadyWaiting, "this owner already waits on this resource")
            .with_details(json!({ "entryId": entry_id }))
    }

    /// A key may not be given a tenant of yeyak's own (SPEC §20).
    pub fn reserved_tenant(tenant: &str) -> Self {
        Self::new(ErrorCode::ReservedTenant, format!("tenant `{tenant}` is reserved for yeyak's own owners"))
            .with_details(json!({ "field": "tenant", "tenant": tenant }))
    }

    pub fn internal() -> Self {
        Self::new(ErrorCode::Internal, "internal error")
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// A refusal read back from its stored body (see [`ApiError::body`]).
    pub fn from_stored_body(body: &str) -> Self {
        let v: Value = serde_json::from_str(body).unwrap_or_default();
        let code: ErrorCode = serde_json::from_value(v["code"].clone()).unwrap_or(ErrorCode::Internal);
        let mut err = ApiError::new(code, v["message"].as_str().unwrap_or_default());
        if !v["details"].is_null() {
            err = err.with_details(v["details"].clone());
        }
        if let Some(rev) = v["currentRevision"].as_i64() {
            err = err.with_current_revision(rev);
        }
        err
    }

    pub fn body(&self) -> Value {
        let mut body = json!({
            "code": self.code,
            "message": self.message,
            "details": self.details,
            "retryable": self.code.retryable(),
        });
        if let Some(rev) = self.current_revision {
            body["currentRevision"] = json!(rev);
        }
        body
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.status());
        if let Some(secs) = self.retry_after_secs {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        res.json(self.body())
    }
}

impl From<DbError> for ApiError {
    fn from(err: DbError) -> Self {
        match err {
            DbError::Unavailable(reason) => {
                tracing::warn!(%reason, "database unavailable");
                ApiError::new(ErrorCode::DatabaseUnavailable, "database unavailable, retry later").with_retry_after(1)
            }
            DbError::RoomTimeTaken => ApiError::room_time_taken(),
            DbError::RoomBufferTaken => ApiError::room_buffer_taken(),
            DbError::DeskAlreadyBooked => ApiError::worded(ErrorCode::DeskAlreadyBooked, json!({})),
            DbError::AlreadyWaiting => ApiError::already_waiting(None),
            DbError::NulInText => ApiError::malformed("text", "a text holds a NUL character"),
            DbError::Retryable(e) => {
                tracing::error!(error = %e, "retries exhausted");
                ApiError::new(ErrorCode::DatabaseUnavailable, "database busy, retry later").with_retry_after(1)
            }
            DbError::Other(e) => {
                tracing::error!(error = ?e, "unexpected database error");
                ApiError::internal()
            }
        }
    }
}
