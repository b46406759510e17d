//! The fuzz harnesses (SPEC §22): one function per parser of bytes from
//! outside, each handing the bytes to the code the server runs on them and
//! asserting what that code promises (no panic; a tree no deeper than its
//! bound; a value written back reads back the same). `fuzz/fuzz_targets/`
//! calls these under `cargo fuzz`, and `tests/fuzz_corpus.rs` replays the
//! saved corpus and every input that ever failed through them, so a
//! harness lives once.
//!
//! Where a handler does its parsing inline with the `AppState` at hand (the
//! zone of a form's date), the harness repeats those lines beside a note
//! naming them; everything else calls the server's own functions.

use std::collections::BTreeSet;

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::test::TestRequest;
use actix_web::{FromRequest, HttpRequest};
use base64::Engine;
use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, NaiveTime, Utc};
use chrono_tz::Tz;
use futures_util::FutureExt;
use serde::de::DeserializeOwned;

use crate::auth::oidc::Pending;
use crate::auth::{staff, throttle, OwnerId};
use crate::calendar::ics::read;
use crate::catalogue::domain::{Equipment, NewRoom, NewRoomBody, RoomPatch, RoomPatchBody};
use crate::dav::path::{href_path, Resource};
use crate::dav::xml::{self, Element, Node};
use crate::dav::{invitation, props, time_range};
use crate::error::ApiError;
use crate::i18n::{I18n, Lang};
use crate::idempotency::IdempotencyKey;
use crate::rooms::booking::PageMark;
use crate::rooms::domain::{day_bounds, RequestedRooms, TimeRange, Title};
use crate::rooms::store::decide::Decision;
use crate::series::domain::{self as series, Recurrence};
use crate::transport::{self, Transport};
use crate::web::{self, FormData};

/// A harness: the bytes of one input, a panic for a failure.
pub type Harness = fn(&[u8]);

/// Every target by name: `fuzz/fuzz_targets/{name}.rs`, `fuzz/corpus/{name}/`
/// and `fuzz/regressions/{name}/`.
pub const TARGETS: &[(&str, Harness)] = &[
    ("xml", xml),
    ("ics", ics),
    ("invitation", invitation),
    ("freebusy", freebusy),
    ("rrule", rrule),
    ("accept_language", accept_language),
    ("authorization", authorization),
    ("cookies", cookies),
    ("headers", headers),
    ("dav_path", dav_path),
    ("form_booking", form_booking),
    ("form_account", form_account),
    ("form_room", form_room),
    ("page_query", page_query),
    ("json_booking", json_booking),
    ("json_series", json_series),
    ("json_room", json_room),
    ("json_capacity", json_capacity),
];

/// The configured zone the harnesses run in (`YEYAK_TIMEZONE`).
const HOME: Tz = chrono_tz::Asia::Seoul;
/// `YEYAK_ROOM_MAIL_DOMAIN`.
const ROOM_DOMAIN: &str = "rooms.example.com";
/// `YEYAK_SECRET_KEY`.
const SECRET: &[u8] = b"fuzz-secret-key-0123456789abcdef";

/// The clock of every harness: a fixed instant, so a run replays exactly.
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_893_456_000, 0).expect("2030-01-01")
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A request carrying `data` as the value of `name`; `None` when no HTTP
/// server would pass such a header on.
fn request_with(name: HeaderName, data: &[u8]) -> Option<HttpRequest> {
    let value = HeaderValue::from_bytes(data).ok()?;
    Some(TestRequest::default().insert_header((name, value)).to_http_request())
}

// ---------------------------------------------------------------- CalDAV

/// `dav::xml::parse`, what `PROPFIND`, `PROPPATCH` and `REPORT` read their
/// body with: the tree is at most `MAX_DEPTH` deep, the readers of a tree
/// take it, and the tree written as an answer reads back the same.
pub fn xml(data: &[u8]) {
    let Some(root) = xml::parse(data) else { return };
    assert!(depth_of(&root) <= xml::MAX_DEPTH, "a tree deeper than {}", xml::MAX_DEPTH);
    let _ = props::Want::from_parent(&root);
    let mut stack = vec![&root];
    while let Some(el) = stack.pop() {
        for name in ["start", "end"] {
            let _ = time_range::attr(el, name);
        }
        stack.extend(&el.children);
    }
    if has_unwritable_namespace(&root) {
        return;
    }
    let written = xml::document(&node_of(&root));
    let back = xml::parse(written.as_bytes()).unwrap_or_else(|| panic!("a written document reads back: {written}"));
    assert!(same_tree(&root, &back), "written and read back differ: {written}");
}

fn depth_of(root: &Element) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1)];
    while let Some((el, d)) = stack.pop() {
        deepest = deepest.max(d);
        stack.extend(el.children.iter().map(|c| (c, d + 1)));
    }
    deepest
}

/// Namespaces an answer cannot carry unchanged: `xml` and `xmlns` may be
/// bound to no other prefix, and quick-xml reads a namespace name without
/// unescaping it (`urn:a&gt;` stays so), while the writer escapes `&<>"'`.
fn has_unwritable_namespace(el: &Element) -> bool {
    const RESERVED: [&str; 2] = ["http://www.w3.org/XML/1998/namespace", "http://www.w3.org/2000/xmlns/"];
    RESERVED.contains(&el.ns.as_str())
        || el.ns.contains(['&', '<', '>', '"', '\''])
        || el.children.iter().any(has_unwritable_namespace)
}

/// An element as an answer writes it (attributes aside: answers write their own).
fn node_of(el: &Element) -> Node {
    Node {
        ns: el.ns.clone(),
        name: el.name.clone(),
        attrs: Vec::new(),
        children: el.children.iter().map(node_of).collect(),
        text: (!el.text.is_empty()).then(|| el.text.clone()),
    }
}

/// Same names and namespaces, and the same text but for the XML whitespace
/// the reader trims.
fn same_tree(a: &Element, b: &Element) -> bool {
    let squeezed = |t: &str| t.chars().filter(|c| !matches!(c, ' ' | '\t' | '\r' | '\n')).collect::<String>();
    a.ns == b.ns
        && a.name == b.name
        && squeezed(&a.text) == squeezed(&b.text)
        && a.children.len() == b.children.len()
        && a.children.iter().zip(&b.children).all(|(x, y)| same_tree(x, y))
}

/// `calendar::ics::read`: the one reader of outside iCalendar; what it
/// reads nests no deeper than its bound.
pub fn ics(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let unfolded = read::unfold(text);
    let Ok(roots) = read::components(&unfolded) else { return };
    let mut stack: Vec<_> = roots.iter().map(|c| (c, 1)).collect();
    while let Some((c, d)) = stack.pop() {
        assert!(d <= read::MAX_DEPTH, "components nested {d} deep");
        stack.extend(c.components.iter().map(|c| (c, d + 1)));
    }
}

/// `dav::invitation::read` (a `PUT` body: `VTIMEZONE`, `DTSTART`/`DTEND`,
/// `DURATION`, `RRULE`, `EXDATE`, `RECURRENCE-ID`), then what `dav::write::put`
/// makes of the invitation before the pipeline: title, rooms, the range, the
/// series and its occurrences, each override's range.
pub fn invitation(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(inv) = invitation::read(text, HOME, ROOM_DOMAIN) else { return };
    assert!(!inv.uid.is_empty() && inv.uid.len() <= 255, "UID {:?}", inv.uid);
    let distinct: BTreeSet<String> = inv.rooms.iter().map(|r| r.to_ascii_lowercase()).collect();
    assert_eq!(distinct.len(), inv.rooms.len(), "rooms named twice: {:?}", inv.rooms);
    let summary = if inv.summary.trim().is_empty() { "회의" } else { inv.summary.as_str() };
    let _ = Title::parse(summary);
    if !inv.rooms.is_empty() {
        let _ = RequestedRooms::parse(&inv.rooms);
    }
    for o in &inv.overrides {
        if let Ok(range) = TimeRange::new(o.starts_at, o.ends_at) {
            booking_range(&range);
        }
    }
    let Ok(range) = TimeRange::new(inv.starts_at, inv.ends_at) else { return };
    booking_range(&range);
    if let Some(rule) = &inv.rrule {
        if let Ok(recurrence) = Recurrence::parse(rule, HOME) {
            occurrences(&range, &recurrence, HOME);
        }
    }
}

/// `dav::invitation::read_freebusy` (a schedule outbox `POST`).
pub fn freebusy(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let Ok(request) = invitation::read_freebusy(text, HOME) else { return };
    assert!(request.ends_at > request.starts_at, "a free-busy window ends after it starts");
}

/// A recurrence as a client writes it (the JSON API's `recurrence`, a
/// CalDAV `RRULE`): `series::domain::Recurrence::parse`, then its
/// occurrences from a first booking. Lines: the rule; the first start
/// (RFC 3339, default 2030-01-07 10:00 in Seoul); its length in minutes
/// (default 60); the zone (default Asia/Seoul).
pub fn rrule(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let mut lines = text.split('\n');
    let rule = lines.next().unwrap_or_default();
    let start = lines
        .next()
        .and_then(|s| DateTime::parse_from_rfc3339(s.trim()).ok())
        .map_or_else(|| DateTime::from_timestamp(1_894_006_800, 0).expect("2030-01-07"), |t| t.to_utc());
    let minutes = lines.next().and_then(|m| m.trim().parse::<i64>().ok()).unwrap_or(60);
    let tz = lines.next().and_then(|z| z.trim().parse::<Tz>().ok()).unwrap_or(HOME);
    let Some(end) = Duration::try_minutes(minutes).and_then(|d| start.checked_add_signed(d)) else { return };
    let Ok(first) = TimeRange::new(start, end) else { return };
    let Ok(recurrence) = Recurrence::parse(rule, tz) else { return };
    // What is stored is read again (a series' PUT compares rules).
    let again = Recurrence::parse(recurrence.as_str(), tz).ok();
    assert_eq!(again.as_ref(), Some(&recurrence), "a stored rule reads back the same");
    occurrences(&first, &recurrence, tz);
}

/// A series' occurrences: at most `MAX_OCCURRENCES`, the first at the
/// first booking, in order, none past `MAX_YEARS`.
fn occurrences(first: &TimeRange, recurrence: &Recurrence, tz: Tz) {
    let Ok(all) = recurrence.occurrences(first, tz) else { return };
    assert!(!all.is_empty() && all.len() <= series::MAX_OCCURRENCES, "{} occurrences", all.len());
    assert_eq!(all[0].starts_at(), first.starts_at(), "the first occurrence is the first booking");
    assert!(all.windows(2).all(|w| w[0].starts_at() < w[1].starts_at()), "occurrences in order");
    if let Some(limit) = first.starts_at().checked_add_months(Months::new(series::MAX_YEARS * 12)) {
        assert!(all.iter().all(|o| o.starts_at() <= limit), "an occurrence past {} years", series::MAX_YEARS);
    }
    for o in &all {
        booking_range(o);
    }
}

/// What commands compute from any booking's range (the check-in window,
/// "not in the past").
fn booking_range(range: &TimeRange) {
    let _ = range.ensure_not_past(now());
    let _ = crate::policy::Policy::default().check_in_window(range.starts_at());
}

/// `dav::path::Resource::parse` of a request path and of a multiget
/// `href` (`href_path` first); a resource's own address reads back as it.
pub fn dav_path(data: &[u8]) {
    let Some(text) = text(data) else { return };
    for path in [text.to_owned(), href_path(text)] {
        if let Some(resource) = Resource::parse(&path) {
            let href = resource.href();
            assert_eq!(Resource::parse(&href), Some(resource), "{href} reads back as {path:?} did");
        }
    }
}

// ----------------------------------------------------------------- headers

/// `Accept-Language` as the JSON, CalDAV and page doors read it
/// (`Lang::from_accept_language` of the visible-ASCII header), and the
/// page's decision (`web::language::decide`) agreeing with it.
pub fn accept_language(data: &[u8]) {
    if let Some(text) = text(data) {
        let _ = Lang::from_accept_language(text);
        for item in text.split(',') {
            let _ = Lang::parse(item);
        }
    }
    let Some(req) = request_with(header::ACCEPT_LANGUAGE, data) else { return };
    let header = req.headers().get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let expected = header.and_then(Lang::from_accept_language).unwrap_or(Lang::Ko);
    assert_eq!(web::language::decide(&req), expected, "the page and the API choose alike");
}

/// `Authorization`: CalDAV's Basic (`dav::auth::basic`) and the JSON API's
/// Bearer (`http::extract::bearer`); what each reads, written back, reads
/// the same.
pub fn authorization(data: &[u8]) {
    let Some(req) = request_with(header::AUTHORIZATION, data) else { return };
    if let Some((user, password)) = crate::dav::auth::basic(&req) {
        assert!(!user.contains(':'), "a Basic username holds no colon");
        let _ = staff::valid_username(&user);
        let _ = throttle::Attempt { username: Some(&user), address: None, known_device: false }.turn_keys();
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let again = request_with(header::AUTHORIZATION, format!("Basic {encoded}").as_bytes())
            .and_then(|r| crate::dav::auth::basic(&r));
        assert_eq!(again, Some((user, password)), "Basic credentials read back");
    }
    if let Some(secret) = crate::http::extract::bearer(&req) {
        assert!(!secret.is_empty() && secret.trim() == secret, "a bearer secret is trimmed and not empty");
        let again = request_with(header::AUTHORIZATION, format!("Bearer {secret}").as_bytes())
            .and_then(|r| crate::http::extract::bearer(&r));
        assert_eq!(again, Some(secret), "a bearer secret reads back");
    }
}

/// `Cookie`: the session (`transport::session_token`), the remembered
/// language (`web::language::decide`), the device mark
/// (`throttle::is_device_of`) and the pending company sign-in
/// (`oidc::Pending::open`), each read from every cookie sent.
pub fn cookies(data: &[u8]) {
    let Some(req) = request_with(header::COOKIE, data) else { return };
    for https in [false, true] {
        let _ = transport::session_token(&req, &Transport { https, trust_proxy: false });
    }
    let _ = web::language::decide(&req);
    let Ok(cookies) = req.cookies() else { return };
    for c in cookies.iter() {
        let value = c.value();
        let _ = throttle::is_device_of(SECRET, value, "kim", now());
        let _ = Pending::open(SECRET, value, now());
        let mark = throttle::device_mark(SECRET, value, now());
        assert!(throttle::is_device_of(SECRET, &mark, value, now()), "a fresh device mark is its person's");
    }
}

/// The other request headers the JSON API reads into values:
/// `X-Reservation-Owner`, `Idempotency-Key`, and the client address of a
/// trusted proxy's `Forwarded` / `X-Forwarded-For`; and the list's `cursor`.
pub fn headers(data: &[u8]) {
    if let Some(text) = text(data) {
        let _ = OwnerId::parse(text);
        let _ = IdempotencyKey::parse(text);
        if let Some(mark) = PageMark::decode(text) {
            let again = PageMark::decode(&mark.encode()).map(|m| (m.starts_at, m.id));
            assert_eq!(again, Some((mark.starts_at, mark.id)), "a cursor reads back");
        }
    }
    let trusted = Transport { https: false, trust_proxy: true };
    for name in [header::FORWARDED, header::X_FORWARDED_FOR] {
        if let Some(req) = request_with(name, data) {
            let _ = trusted.client_ip(&req);
        }
    }
}

// ------------------------------------------------------------------- forms

/// A form body as every form handler takes it (`web::FormData`).
fn form(data: &[u8]) -> Option<FormData> {
    let (req, mut payload) = TestRequest::default().set_payload(data.to_vec()).to_http_parts();
    FormData::from_request(&req, &mut payload).now_or_never()?.ok()
}

/// `web::form::local_range` without the `AppState` it reads only the zone
/// from (keep in step with src/web/form.rs).
fn local_range(tz: Tz, date: NaiveDate, start: NaiveTime, end: NaiveTime) -> Result<TimeRange, ApiError> {
    let at = |t| {
        web::grid::local_instant(tz, date, t).ok_or_else(|| ApiError::malformed("start", "does not exist on that day"))
    };
    let (s, mut e) = (at(start)?, at(end)?);
    if end == NaiveTime::MIN && start > NaiveTime::MIN {
        e += Duration::days(1);
    }
    TimeRange::new(s, e)
}

/// `web::form::form_range`, likewise.
fn form_range(tz: Tz, form: &FormData) -> Result<TimeRange, ApiError> {
    let date = web::form::parse_date(form.get("date"))?;
    let start = web::form::parse_time("start", form.get("start"))?;
    let end = web::form::parse_time("end", form.get("end"))?;
    local_range(tz, date, start, end)
}

/// The booking form (`web::bookings::book`: one booking or a series from
/// `repeat` and `repeat_until`) and the move form (`move_booking`).
pub fn form_booking(data: &[u8]) {
    let Some(form) = form(data) else { return };
    let _ = Title::parse(form.get("title"));
    let _ = RequestedRooms::parse(&form.all("rooms"));
    let _ = web::form::form_key(&form);
    let _ = web::form::checked(&form, "on_conflict");
    let Ok(range) = form_range(HOME, &form) else { return };
    booking_range(&range);
    match form.get("repeat") {
        "" | "none" => {}
        repeat => {
            let Ok(until) = web::form::parse_date(form.get("repeat_until")) else { return };
            if let Ok(recurrence) = series::from_form(repeat, until, HOME) {
                occurrences(&range, &recurrence, HOME);
            }
        }
    }
}

/// The sign-in form (`web::account::login`: username, password, `next`)
/// and the account and approval forms (app password label, language,
/// approval reason, the door display's booking id).
pub fn form_account(data: &[u8]) {
    let Some(form) = form(data) else { return };
    let username = form.get("username").trim().to_owned();
    let _ = staff::valid_username(&username);
    let _ = form.get("password");
    let next = web::account::safe_next(Some(form.get("next")).filter(|n| !n.is_empty()));
    let rest = next.strip_prefix('/').expect("`next` is a path");
    assert!(!rest.starts_with(['/', '\\']), "`next` {next:?} leaves the origin");
    assert!(!next.contains('\\') && !next.chars().any(|c| c.is_control() || c.is_whitespace()), "{next:?}");
    let _ = crate::auth::app_password::parse_label(form.get("label"));
    let _ = Lang::parse_exact(form.get("language"));
    for approve in [true, false] {
        let _ = Decision::parse(approve, Some(form.get("reason")));
    }
    let _ = form.get("booking_id").parse::<i64>();
}

/// The room forms of `/admin/rooms` (`new_room`, `room_patch`).
pub fn form_room(data: &[u8]) {
    let Some(form) = form(data) else { return };
    let _ = web::admin::rooms::new_room(&form);
    let _ = web::admin::rooms::room_patch(&form);
}

/// The query strings of the day, week and find pages (`?date=…`), read
/// with `serde_urlencoded` as `web::Query` does, then what each handler
/// computes from the date (keep in step with src/web/day.rs, week.rs and
/// find.rs, which do it inline); and the reports' `?from=&to=`
/// (`http::reports::RangeQuery`, `reports::domain::Period::parse`).
pub fn page_query(data: &[u8]) {
    let Some(query) = text(data) else { return };
    if let Ok(uri) = format!("/api/reports/utilisation?{query}").parse::<actix_web::http::Uri>() {
        let req = TestRequest::default().uri(&uri.to_string()).to_http_request();
        let range = crate::http::reports::RangeQuery::of(&req);
        let today = now().with_timezone(&HOME).date_naive();
        if let Ok(period) = crate::reports::domain::Period::parse(range.from.as_deref(), range.to.as_deref(), today) {
            assert!(period.from() <= period.to(), "a period ends after it starts");
            let _ = (day_bounds(HOME, period.from()), day_bounds(HOME, period.to()), period.slug());
        }
    }
    let day = serde_urlencoded::from_str::<web::day::DayQuery>(query).is_ok();
    let week = serde_urlencoded::from_str::<web::week::WeekQuery>(query).is_ok();
    let find = serde_urlencoded::from_str::<web::find::FindQuery>(query).is_ok();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let one = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let Some(date) = one("date").and_then(|d| web::form::parse_date(d).ok()) else { return };
    let i18n = I18n::new(Lang::En);
    if day {
        // web::day::render_day
        let _ = day_bounds(HOME, date);
        let _ = (i18n.date(date), date.pred_opt(), date.succ_opt());
    }
    if week {
        // web::week::week
        let monday = date - Duration::days(i64::from(date.weekday().num_days_from_monday()));
        let days: Vec<NaiveDate> = (0..7).map(|i| monday + Duration::days(i)).collect();
        let _ = (day_bounds(HOME, monday), day_bounds(HOME, days[6]));
        let _ = (i18n.week(monday, days[6]), monday - Duration::days(7), monday + Duration::days(7));
    }
    if find {
        // web::find::search
        let time = |name| web::form::parse_time(name, one(name).unwrap_or_default());
        if let (Ok(start), Ok(end)) = (time("start"), time("end")) {
            if let Ok(range) = local_range(HOME, date, start, end) {
                let _ = crate::http::rooms::FreeQuery::check(range.starts_at(), range.ends_at());
            }
        }
        let _ = Equipment::parse_list("equipment", one("equipment").unwrap_or_default());
    }
}

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
        let _ = Title::parse(&body.title);
        let _ = RequestedRooms::parse(&body.rooms);
        let _ = Title::parse_field("organizerName", body.organizer_name.as_deref().unwrap_or("fuzz"));
        if let Ok(range) = TimeRange::new(body.starts_at, body.ends_at) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_body_is_read_without_a_runtime() {
        let read = form(b"rooms=A&rooms=B&title=%EC%A3%BC%EA%B0%84").expect("an in-memory body is ready at once");
        assert_eq!(read.all("rooms"), ["A", "B"]);
        assert_eq!(read.get("title"), "주간");
    }

    #[test]
    fn every_harness_takes_nothing_and_garbage() {
        for (_, harness) in TARGETS {
            for input in [&b""[..], b"\0\xff{<", b"date=2030-01-07&start=10:00&end=11:00"] {
                harness(input);
            }
        }
    }
}
