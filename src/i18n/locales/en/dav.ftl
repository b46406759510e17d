# What calendar apps show of the CalDAV door's collections (SPEC §17).
dav-principals = People and rooms
dav-rooms-home = Room calendars
dav-home = Calendars
dav-bookings = { $person }'s room bookings
dav-inbox = Inbox
dav-outbox = Outbox
# The title of an event sent without a SUMMARY.
dav-untitled = Meeting
