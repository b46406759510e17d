"""yeyak's CalDAV door driven by the `caldav` client library (SPEC §17).

Run by tests/api/caldav_client.rs against a spawned app. Environment:
BASE_URL, DAV_USER, DAV_PASSWORD (an app password), API_KEY (an
integration key, for bookings made through another door), DAY (a future
date, YYYY-MM-DD, in Asia/Seoul). Prints "scenario passed" at the end.
"""

import datetime as dt
import json
import os
import urllib.error
import urllib.request
from zoneinfo import ZoneInfo

import caldav
import icalendar
from caldav.lib import error

BASE = os.environ["BASE_URL"]
USER = os.environ["DAV_USER"]
PASSWORD = os.environ["DAV_PASSWORD"]
KEY = os.environ["API_KEY"]
DOMAIN = "yeyak.local"
SEOUL = ZoneInfo("Asia/Seoul")
DAY = dt.date.fromisoformat(os.environ["DAY"])


def at(hour, minute=0, days=0):
    return dt.datetime.combine(DAY + dt.timedelta(days=days), dt.time(hour, minute), SEOUL)


def utc(t):
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def api(method, path, body=None, key=None):
    """The JSON API with the integration key (another door)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, method=method, data=data)
    req.add_header("Authorization", "Bearer " + KEY)
    req.add_header("X-Reservation-Owner", "python")
    req.add_header("Content-Type", "application/json")
    if key:
        req.add_header("Idempotency-Key", key)
    try:
        with urllib.request.urlopen(req) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def bookings_between(start, end):
    q = f"/api/bookings?from={utc(start)}&to={utc(end)}&includeCancelled=true"
    status, body = api("GET", q)
    assert status == 200, body
    return body["bookings"]


def invitation(uid, title, rooms, start, end, rrule=None):
    cal = icalendar.Calendar()
    cal.add("prodid", "-//yeyak tests//python caldav//EN")
    cal.add("version", "2.0")
    ev = icalendar.Event()
    ev.add("uid", uid)
    ev.add("summary", title)
    ev.add("dtstart", start)
    ev.add("dtend", end)
    ev.add("dtstamp", dt.datetime.now(dt.timezone.utc))
    ev.add("organizer", f"mailto:{USER}@example.com")
    for r in rooms:
        ev.add(
            "attendee",
            f"mailto:room-{r.lower()}@{DOMAIN}",
            parameters={"CUTYPE": "ROOM", "PARTSTAT": "NEEDS-ACTION", "RSVP": "TRUE"},
        )
    if rrule:
        ev.add("rrule", rrule)
    cal.add_component(ev)
    return cal.to_ical().decode()


def room_attendee(data, room):
    unfolded = data.replace("\r\n ", "").replace("\n ", "")
    lines = [l for l in unfolded.splitlines() if l.lower().endswith(f"mailto:room-{room.lower()}@{DOMAIN}")]
    assert len(lines) == 1, unfolded
    return lines[0]


# --- Discovery: the well-known address leads to the person's principal. ---
client = caldav.DAVClient(url=BASE + "/.well-known/caldav", username=USER, password=PASSWORD)
principal = client.principal()
assert str(principal.url).endswith(f"/dav/principals/{USER}/"), principal.url
assert principal.calendar_user_address_set()[0] == f"mailto:{USER}@example.com"
calendars = principal.calendars()
bookings = [c for c in calendars if str(c.url).endswith("/bookings/")]
assert len(bookings) == 1, [str(c.url) for c in calendars]
bookings = bookings[0]
assert bookings.get_supported_components() == ["VEVENT"]

# --- Subscription to a room's calendar (read-only). ---
room_a = client.calendar(url=BASE + "/dav/calendars/rooms/A/")
assert room_a.get_display_name() == "회의실 A", room_a.get_display_name()
room_sync = room_a.objects_by_sync_token(load_objects=False, disable_fallback=True)
assert list(room_sync) == [], "an empty room"

# --- Booking by inviting a room. ---
event = bookings.save_event(invitation("py-meeting-1", "주간 회의", ["A"], at(10), at(11)))
booked = [b for b in bookings_between(at(0), at(23)) if b["title"] == "주간 회의"]
assert len(booked) == 1 and booked[0]["rooms"] == ["A"] and booked[0]["status"] == "CONFIRMED", booked
assert booked[0]["startsAt"] == utc(at(10)), booked
event.load()
line = room_attendee(event.data, "A")
assert "CUTYPE=ROOM" in line and "PARTSTAT=ACCEPTED" in line, line
assert "py-meeting-1" in event.data
found = room_a.search(start=at(0), end=at(23, 59), event=True)
assert len(found) == 1 and "주간 회의" in found[0].data, [f.data for f in found]
# Seen by the room's sync (the subscription) in one round.
updated, deleted = room_sync.sync()
assert len(updated) == 1 and not deleted, (updated, deleted)

# --- A conflicting invitation is kept, and the room declines inside it (SPEC §23). ---
clash = bookings.save_event(invitation("py-clash", "겹침", ["A"], at(10, 30), at(11, 30)))
clash.load()
line = room_attendee(clash.data, "A")
assert "PARTSTAT=DECLINED" in line and "X-YEYAK-CODE=ROOM_TIME_TAKEN" in line, line
assert not [b for b in bookings_between(at(0), at(23)) if b["title"] == "겹침"]

# --- Moving it: the client edits and saves (with its ETag). ---
comp = event.icalendar_component
comp.pop("DTSTART")
comp.pop("DTEND")
comp.add("dtstart", at(13))
comp.add("dtend", at(14))
event.save()
moved = [b for b in bookings_between(at(0), at(23)) if b["title"] == "주간 회의"]
assert len(moved) == 1 and moved[0]["startsAt"] == utc(at(13)) and moved[0]["version"] == 2, moved

# --- Another door books room A: it appears within one sync. ---
status, other = api(
    "POST",
    "/api/bookings",
    {"title": "다른 문", "rooms": ["A"], "startsAt": utc(at(15)), "endsAt": utc(at(16))},
    key="py-other-door",
)
assert status == 201, other
updated, deleted = room_sync.sync()
urls = [str(o.url) for o in updated]
assert any(u.endswith(f"/booking-{other['id']}.ics") for u in urls), urls

# --- Cancelling: DELETE; the room's sync reports it gone. ---
event.delete()
cancelled = [b for b in bookings_between(at(0), at(23)) if b["title"] == "주간 회의"]
assert cancelled[0]["status"] == "CANCELLED", cancelled
updated, deleted = room_sync.sync()
assert len(deleted) == 1 and not updated, (updated, deleted)

# --- A weekly series: one member, never expanded; one instance deleted. ---
weekly = bookings.save_event(
    invitation("py-weekly", "주간 반복", ["B"], at(9), at(10), rrule={"freq": "weekly", "count": 4})
)
series = [b for b in bookings_between(at(0), at(23, days=30)) if b["title"] == "주간 반복"]
assert len(series) == 4 and len({b["seriesId"] for b in series}) == 1, series
weekly.load()
assert weekly.data.count("BEGIN:VEVENT") == 1 and "RRULE:FREQ=WEEKLY;COUNT=4" in weekly.data, weekly.data
comp = weekly.icalendar_component
comp.add("exdate", at(9, days=7))
weekly.save()
after = {b["startsAt"]: b["status"] for b in bookings_between(at(0), at(23, days=30)) if b["title"] == "주간 반복"}
assert after[utc(at(9, days=7))] == "CANCELLED", after
assert sorted(after.values()) == ["CANCELLED", "CONFIRMED", "CONFIRMED", "CONFIRMED"], after
weekly.load()
assert "EXDATE" in weekly.data and weekly.data.count("BEGIN:VEVENT") == 1, weekly.data

# --- A series with a taken date is declined whole, and nothing of it booked. ---
status, blocker = api(
    "POST",
    "/api/bookings",
    {"title": "막는 예약", "rooms": ["C"], "startsAt": utc(at(9, days=14)), "endsAt": utc(at(10, days=14))},
    key="py-blocker",
)
assert status == 201, blocker
declined = bookings.save_event(
    invitation("py-weekly-c", "C 반복", ["C"], at(9), at(10), rrule={"freq": "weekly", "count": 3})
)
declined.load()
line = room_attendee(declined.data, "C")
assert "PARTSTAT=DECLINED" in line and "X-YEYAK-CODE=SERIES_CONFLICT" in line, line
assert not [b for b in bookings_between(at(0), at(23, days=30)) if b["title"] == "C 반복"]

# --- Free/busy: the outbox and the room's report give availability's intervals. ---
status, avail = api("GET", f"/api/rooms/A/availability?date={DAY.isoformat()}")
assert status == 200, avail
day_start, day_end = at(0), at(0, days=1)
free = [(f["startsAt"], f["endsAt"]) for f in avail["free"]]
edges = [utc(day_start)] + [x for f in free for x in f] + [utc(day_end)]
expected = [(a, b) for a, b in zip(edges[0::2], edges[1::2]) if a != b]
assert expected == [(utc(at(15)), utc(at(16)))], (expected, free)


def busy_of(fb_text):
    cal = icalendar.Calendar.from_ical(fb_text)
    out = []
    for comp in cal.walk("VFREEBUSY"):
        periods = comp.get("FREEBUSY") or []
        if not isinstance(periods, list):
            periods = [periods]
        for p in periods:
            for start, end in p.dts if hasattr(p, "dts") else [p.dt]:
                out.append((utc(start), utc(end)))
    return sorted(out)


answer = principal.freebusy_request(day_start, day_end, [f"mailto:room-a@{DOMAIN}"])
assert not answer["errors"], answer["errors"]
assert busy_of(answer[f"mailto:room-a@{DOMAIN}"].data) == expected, answer[f"mailto:room-a@{DOMAIN}"].data
report = room_a.freebusy_request(day_start, day_end)
assert busy_of(report.data) == expected, report.data

print("scenario passed")
