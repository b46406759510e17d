# What calendar apps show of the CalDAV door's collections (SPEC §17).
dav-principals = 사람과 회의실
dav-rooms-home = 회의실 캘린더
dav-home = 캘린더
dav-bookings = { $person }의 회의실 예약
dav-inbox = 받은 일정
dav-outbox = 보낼 일정
# The title of an event sent without a SUMMARY.
dav-untitled = 회의
