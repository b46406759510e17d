# Every page (SPEC §5, §19): the header, the language switch, message pages.
app-name = Bookings
nav-label = User
nav-admin = admin
nav-week = Week
nav-my = My bookings
nav-find = Find a room
nav-account = Account
nav-approvals = Approvals
nav-rooms = Rooms
nav-areas = Areas
nav-holidays = Holidays
nav-reports = Reports
nav-consistency = Consistency
nav-staff = Accounts & keys
nav-logout = Sign out
nav-language = Language
message-back = To today's rooms
error-retry-heading = Please try again in a moment
error-bad-request = Bad request
error-form-unreadable = The form could not be read.
error-too-large = Request too large
error-form-too-large = The form is too large.
error-not-done = The request was not carried out
error-csrf = The security token is missing or does not match. Reload the page and try again.
error-admin-only-heading = For admins only
error-admin-only = This page is for admins.
error-hashing-busy = Too many password requests right now.
error-not-found-heading = Not found
error-not-found = There is no such item.
error-page-not-found = There is no page at this address.
error-internal-heading = Something went wrong

# Sign-in and the account page (SPEC §13, §15, §19, §21).
login-title = Sign in
login-username = Username
login-password = Password
login-submit = Sign in
login-locked = Too many sign-in attempts. Please try again later.
login-wrong = The username or password is not right.
login-busy = Too many sign-ins right now. Please try again in a moment.
login-directory-down = The company directory cannot be reached right now. Please try again in a moment.
login-sso = Sign in with your company account
sso-unavailable = Company sign-in is not available right now
sso-not-allowed = You are not allowed to use this service
sso-failed = Could not sign you in
sso-bad-request = The sign-in request did not match or has expired. Please try again.
sso-bad-token = The company account's answer could not be verified. Please try again.
sso-later = Please try again in a moment.
account-title = My account
account-language-heading = Language
account-language-label = Language of pages and mail
account-language-submit = Save
account-zone-heading = My time zone
account-zone-label = Time zone (IANA name)
account-zone-hint = Leave it empty for the installation's, { $zone }. Pages of other areas show your time beside theirs.
account-zone-submit = Save time zone
account-zone-saved = Time zone saved.
account-language-saved = Your language is now English: pages and mail come in English.
account-language-invalid = Choose the language: ko or en.
account-feed-heading = Calendar subscription
account-feed-hint = Subscribe to this address in a calendar app to see your bookings. Anyone who knows the address can read it, so do not share it.
account-feed-rotate = Make a new address (the old one stops)
account-feed-rotated = A new calendar address is made. The old one no longer opens.
account-password-heading = Change password
account-password-current = Current password
account-password-new = New password (at least 10 characters)
account-password-submit = Change
account-password-too-short = The new password needs at least 10 characters.
account-password-throttled = Too many password checks. Please try again later.
account-password-wrong = The current password is not right.
account-password-changed = Your password is changed. Your sign-ins elsewhere have ended.
account-company-password = This account signs in with the company account; its password is managed there.
dav-heading = Calendar apps (CalDAV)
dav-intro = Add yeyak as a CalDAV account in Apple Calendar, Thunderbird, DAVx⁵ or a similar app to see your bookings there and book a room by inviting it.
dav-server = Server address
dav-username = Username
dav-password = Password
dav-password-below = an app password made below
app-password-shown-once = New app password ‘{ $label }’ (shown only this once):
app-password-label = App password name (e.g. my iPhone)
app-password-create = Create app password
app-password-list = My app passwords
app-password-col-label = Name
app-password-col-created = Created
app-password-col-last-used = Last used
app-password-col-state = State
app-password-never-used = never used
app-password-revoked-state = revoked
app-password-revoke = Revoke
app-password-revoke-named = Revoke { $label }
app-password-bad-label = A name (label) needs 1 to 100 characters, without control characters or line breaks.
app-password-created = App password ‘{ $label }’ is created. It is shown only this once.
app-password-revoked = App password ‘{ $label }’ is revoked. It can no longer sign in.
app-password-not-found = There is no such app password.

# Accounts and API keys (/admin/staff, SPEC §13, §15).
staff-title = Accounts and API keys
staff-heading = Staff accounts
staff-col-name = Name
staff-col-username = Username
staff-col-email = Email
staff-col-state = State
staff-col-source = Source
staff-col-last-sign-in = Last sign-in
staff-col-manage = Manage
staff-state-disabled = disabled
staff-state-active = active
staff-enable = Enable
staff-disable = Disable
staff-new-password = New password
staff-set-password = Set password
staff-add-heading = Add an account
staff-username = Username
staff-display-name = Name
staff-email = Email (optional)
staff-password = Password (at least 10 characters)
staff-is-admin = Admin
staff-add = Add
staff-refused-username = A username is 1 to 64 letters, digits, ., _ or -.
staff-refused-display-name = Give the name in 1 to 100 characters.
staff-refused-display-name-control = The name (display_name) may not hold control characters or line breaks.
staff-refused-password = A password needs at least 10 characters.
staff-refused-email = The email address is not well-formed.
staff-refused-taken = This username exists.
staff-refused-disable-self = You cannot disable your own account.
staff-created = The account { $username } is made.
staff-disabled = The account { $username } is disabled. Its sign-ins, calendar subscription and the door displays it made have all ended.
staff-enabled = The account { $username } is enabled again.
staff-password-reset = The password is set. That person's other sign-ins have all ended.
keys-create-heading = Make an API key
keys-new = New key (shown only this once):
keys-tenant = Tenant
keys-role = Role
keys-label = Label
keys-create = Make the key
keys-heading = API keys
keys-col-id = No.
keys-col-last-used = Last used
keys-configured = setting
keys-revoked-state = revoked
keys-revoke = Revoke
keys-managed-by-setting = managed in YEYAK_API_KEYS
keys-refused-tenant-role = Check the tenant (1 to 64 letters, digits, ., _ or -) and the role.
keys-refused-label-long = A label is at most 100 characters.
keys-refused-label-control = The label may not hold control characters or line breaks.
keys-refused-reserved = The tenant { $tenant } is a name yeyak uses itself and cannot have a key.
keys-created = The { $role } key of the tenant { $tenant } is made.
keys-revoked = Key #{ $id } of the tenant { $tenant } is revoked.

# The consistency report (/admin/consistency, SPEC §5).
consistency-title = Consistency check
consistency-all-zero = all 0
consistency-problems = problems found
consistency-col-check = Check
consistency-col-description = Description
consistency-col-count = Count

# The room catalogue (/admin/rooms, SPEC §8, §11).
rooms-title = Rooms
rooms-list = List of rooms
rooms-col-code = Code
rooms-col-name = Name
rooms-col-area = Area
rooms-col-position = Position
rooms-col-suite = Suite
rooms-col-capacity = Seats
rooms-col-equipment = Equipment
rooms-col-rules = Rules
rooms-col-state = State
rooms-rule-max = at most { $minutes } min
rooms-rule-horizon = { $days ->
    [one] 1 day ahead
   *[other] { $days } days ahead
}
rooms-rule-check-in = check-in
rooms-rule-approval = approval
rooms-rule-buffers = setup { $before } min, cleanup { $after } min
rooms-state-active = in use
rooms-state-retired = retired
rooms-add-heading = Add a room
rooms-add = Add
rooms-created = The room { $name } ({ $code }) is added.
rooms-updated = The room is changed.
rooms-retired = The room { $name } ({ $code }) is retired. Its past bookings stay on record.
rooms-display-issued = A door display address is made. It is shown only this once.
rooms-display-revoked = { $count ->
    [one] 1 door display token is revoked.
   *[other] { $count } door display tokens are revoked.
}
rooms-not-found-heading = Room not found
rooms-not-found = There is no such room.
room-title = Manage { $name }
room-save = Save
room-retired = This room is retired. Its past bookings stay on record.
room-display-heading = Door display
room-display-hint = The address for the tablet at the door. Its token opens this room's display and nothing else. Tokens in use: { $count }
room-display-new = New address (shown only this once):
room-display-issue = Make a display address
room-display-revoke = Revoke every display token
room-retire-heading = Retire the room
room-retire-hint = A retired room cannot be booked any more; its past bookings stay on record.
room-retire-cancel-future = Cancel its upcoming bookings too (linked bookings are cancelled in every room)
room-retire = Retire
room-field-code-fixed = The code cannot be changed.
room-field-position = Position (empty: last)
room-field-suite = Suite (the same for rooms booked together; empty for none)
room-field-equipment = Equipment (comma-separated)
room-field-max-duration = Longest booking (minutes)
room-field-horizon = Bookable days ahead (empty: no limit)
room-field-check-in = Check-in required
room-field-approval = Approval required
room-field-buffer-before = Setup time before each meeting (minutes, 0-240)
room-field-buffer-after = Cleanup time after each meeting (minutes, 0-240)
room-buffer-conflicts = Bookings closer than the buffers
room-buffer-conflicts-hint = Future bookings the room's buffers as they are now would not have allowed. Each keeps the buffers it was made under.

# Areas and holiday calendars (/admin/areas, /admin/holidays, SPEC §24, §29).
areas-title = Areas
areas-list = The areas
areas-col-code = Code
areas-col-name = Name
areas-col-time-zone = Time zone
areas-col-working-hours = Working hours
areas-col-holiday-calendar = Holiday calendar
areas-col-rules = Rules
areas-col-position = Position
areas-hours-closed = closed every day
areas-rule-restrict = bookable in working hours only
areas-rule-closed = closed on holidays
areas-calendar-none = None
areas-add-heading = Add an area
areas-add = Add
areas-save = Save
areas-edit-title = Manage the area { $name }
areas-created = Added the area { $name } ({ $code }).
areas-updated = Saved the area { $name } ({ $code }).
areas-not-found-heading = Area not found
areas-not-found = There is no such area.
areas-field-code-fixed = The code cannot be changed.
areas-field-name-hint = Empty: the same as the code.
areas-field-time-zone-hint = An IANA name (e.g. Asia/Seoul, America/New_York). Empty: the installation's time zone.
areas-field-working-hours-hint = Each day as mon 09:00-18:00, separated by commas (mon tue wed thu fri sat sun). A day not written is closed.
areas-field-position = Position (empty: last)
areas-field-restrict = Refuse bookings outside the working hours (admins excepted)
areas-field-closed = Refuse bookings on holidays (admins excepted)
areas-field-code = Give the area's code in 1 to 100 characters.
areas-field-working-hours = Write the working hours as mon 09:00-18:00, tue 09:00-18:00 (days mon to sun, times HH:MM, the start before the end).
areas-field-holiday-calendar = There is no such holiday calendar. Choose one from the list.
holidays-title = Holiday calendars
holidays-hint = An area may use one holiday calendar. A calendar's days are replaced all at once by uploading an .ics file (the public-holiday files calendar apps publish).
holidays-none = There are no holiday calendars yet.
holidays-no-days = No days yet.
holidays-days-caption = { $count ->
    [one] One holiday of { $name }
   *[other] { $count } holidays of { $name }
}
holidays-col-date = Date
holidays-col-name = Name
holidays-file = Replace the days from an .ics file
holidays-file-hint = Each all-day event is a holiday (up to the day before its DTEND), named by its SUMMARY. Every current day is replaced by the file's.
holidays-upload = Upload
holidays-add-heading = Add a holiday calendar
holidays-add = Add
holidays-field-name-hint = Empty: the same as the code.
holidays-created = Added the holiday calendar { $name } ({ $code }).
holidays-replaced = { $name } now has the { $count } days of the file.
holidays-refused-no-file = Choose an .ics file for the calendar { $code }. Nothing was changed.
holidays-refused-file = The file is not a holiday calendar (.ics): it must be an iCalendar file of all-day events, and repeating events are not read. The calendar { $code } was not changed.
holidays-not-found = There is no holiday calendar { $code }.
holidays-field-code = Give the calendar's code in 1 to 100 characters.
upload-too-large = The file is too large (1 MiB at most).

# The usage report (/admin/reports, SPEC §12).
report-heading = Room usage report
report-from = From
report-to = To (inclusive)
report-show = Show
report-hint = Working hours are each area's hours per weekday in its own time zone, its holidays left out (time booked on a holiday still counts as booked). A period is in each area's dates, at most 366 days; bookings, cancellations and releases count by their start.
report-working-hours = { $hours } working hours per room
report-downloads = Download:
report-download-utilisation = utilisation per room (CSV)
report-download-bookings = list of bookings (CSV)
report-chart-caption = Utilisation of working hours per room: the share of its area's working hours (holidays left out) taken by confirmed and released bookings
report-chart-axis = Working-hours utilisation
report-chart-title = Working-hours utilisation per room ({ $period })
report-no-rooms = No rooms in use.
report-caption = Use per room ({ $period })
report-col-room = Room
report-col-hours = Booked (hours)
report-col-bookings = Bookings
report-col-cancellations = Cancelled
report-col-releases = Released (no-show)
report-col-released-hours = Released (h)
report-col-reused-hours = Booked again (h)
report-col-reused-share = Recaptured
report-total = Total
report-hours-hint = Booked time is in hours. A booking of several rooms counts once per room (the total is room-hours).
report-refused-from = Choose the start date as YYYY-MM-DD.
report-refused-to = Choose the end date as YYYY-MM-DD.
report-refused-reversed = The end date cannot be before the start date.
report-refused-too-long = A report covers at most { $days } days.
report-refused-area = There is no area “{ $area }”. Choose an area from the list.

# A booking's page and its cancellation (SPEC §5, §9, §12).
booking-not-found-heading = Booking not found
booking-not-found = There is no such booking.
booking-back = Back to that day's rooms
booking-rooms = Rooms
booking-time = Time
booking-organizer = Booked by
booking-status = Status
booking-checked-in-at = checked in at { $time }
booking-series = Repeats
booking-exception = changed on this date only
booking-check-in = Check in
booking-checked-in = Checked in.
booking-move-heading = Move to another time
booking-move = Move
booking-cancel-link = Cancel the booking…
booking-ics = Calendar file (.ics)
booking-history = History
form-date = Date
form-start = Start
form-end = End
cancel-title = Cancel booking
cancel-question = Cancel this booking?
cancel-scope = What of the repeating booking should be cancelled?
cancel-scope-one = This date only
cancel-scope-following = This date and all after it
cancel-scope-series = The whole series (upcoming dates)
cancel-yes = Yes, cancel it
cancel-no = No
status-confirmed = confirmed
status-pending = awaiting approval
status-cancelled = cancelled
status-rejected = rejected
status-released = released automatically
history-created = booked
history-moved = time changed
history-retitled = title changed
history-cancelled = cancelled
history-checked-in = checked in
history-released = released automatically
history-approved = approved
history-actor-for = { $delegate } for { $person }
history-restored = restored
history-rejected = rejected
history-field-title = title
history-field-rooms = rooms
history-field-starts-at = start
history-field-ends-at = end
history-field-status = status
history-field-checked-in-at = check-in
history-field-released-at = released
history-field-reason = reason
# Who a booking's history names for yeyak's own release of a no-show (the
# sweeper; written in the default language, Korean, as the history keeps it).
history-actor-no-show = yeyak (released: no check-in)

# Approvals (/admin/approvals, SPEC §12).
approvals-title = Approvals
approvals-heading = Bookings awaiting approval
approvals-none = No bookings are waiting.
approvals-approve = Approve
approvals-reason = Reason for rejecting
approvals-reason-optional = Reason for rejecting (optional)
approvals-reject = Reject
approvals-approved = The booking { $title } ({ $time }) is approved.
approvals-rejected = The booking { $title } ({ $time }) is rejected.

# My bookings (/my, SPEC §9).
my-none = No upcoming bookings.
my-book-one = Book a room.
my-upcoming = Upcoming bookings
my-repeats = repeats
my-series = My repeating bookings
my-series-none = No repeating bookings in progress.
my-series-ahead = { $count ->
    [one] 1 more time
   *[other] { $count } more times
}
my-series-next = next:
my-series-cancel = cancel…
form-for = Book for
form-for-me = Myself
form-private = Private: others see only that the room is busy
private-booking = Private booking
form-title = Title

# Find a free room (/find, SPEC §8).
find-all-areas = All areas
find-known-equipment = Equipment there is:
find-no-equipment = none
find-submit = Find
find-found = { $count ->
    [one] 1 free room
   *[other] { $count } free rooms
}
find-capped = The best { $count } rooms, smallest sufficient first; more may be free. Ask for more seats, equipment or one area to narrow the search.
find-none = No free room fits. Try another time or fewer seats.
find-book-column = Book
find-book = Book { $name }
room-seats = { $count ->
    [one] 1 seat
   *[other] { $count } seats
}

# The day page (/, /rooms, SPEC §5, §8, §9).
day-title = Rooms on { $date }
day-nav = Move by day
day-prev = Previous day
day-today = Today
day-next = Next day
day-pick = Choose a date
day-go = Go
day-grid-label = Bookings of { $area } on { $date }
day-free-cell = { $room } { $start }–{ $end } free, book it
day-legend-free = free (click to book)
day-band-setup = Setup
zone-note = Times here are in { $area } (now { $areaNow }). In your zone, { $mine }, it is { $myNow }.
zone-span = { $time } ({ $zone }; yours { $mine })
day-band-cleanup = Cleanup
day-legend-booked = booked
day-book-heading = Book a room
day-repeat-until = Repeat until (inclusive)
day-repeat-none = Once
day-repeat-daily = Every day
day-repeat-weekly = Every week
day-repeat-biweekly = Every two weeks
day-repeat-monthly = Every month
day-rooms-legend = Rooms (only neighbours of one suite together: e.g. A+B, B+C, A+B+C)
day-taken-dates = Dates already booked:
day-book = Book
day-book-rest = Book the other dates only
day-notice-series = { $count ->
    [one] 1 repeating booking is made.
   *[other] { $count } repeating bookings are made.
}
day-notice-series-skipped = { $count ->
    [one] 1 repeating booking is made.
   *[other] { $count } repeating bookings are made.
} { $skipped ->
    [one] 1 date already booked was skipped.
   *[other] { $skipped } dates already booked were skipped.
}
day-notice-booked = Booked.
day-notice-moved = The booking is moved.
day-notice-cancelled = The booking is cancelled. That time is free again.

# The week page (/rooms/week, SPEC §9).
week-title = Rooms in the week { $week }
week-nav = Move by week
week-prev = Previous week
week-this = This week
week-next = Next week
week-grid-label = Bookings of { $area } in the week { $week }

# The door display (/display/{code}, SPEC §11).
display-not-found-heading = The display cannot open
display-not-found = The address or its token is not right.
display-busy = In use
display-free = Free
display-clock = Time now
display-now = Now
display-checked-in = checked in
display-no-booking = No booking
display-book-now = Book now
display-book-now-title = Booked at the door
display-organizer = Door display ({ $room })
display-minutes = { $minutes } min
display-next = Next bookings
display-no-more = No more bookings today.
display-check-in-rule = a booking not checked in after its start is released automatically
display-check-in = Check in ({ $title })
display-until = until { $time }
display-rest-of-day = for the rest of the day

# Calendar feeds (/ical/…, SPEC §10).
feed-not-found-heading = Calendar not found
feed-not-found = The address is not right.
# Refused forms (SPEC §5, §15, §21): the form's own words for a field.
form-field-title = Give the title in 1 to 200 characters.
form-field-rooms = Choose at least one room (each room once).
form-field-date = Choose the date as YYYY-MM-DD.
form-field-times = Choose the start and end times as HH:MM.
form-field-code = A code is 1 to 32 letters, digits, _ or -.
form-field-name = Give the name in 1 to 100 characters.
form-field-area = Give the area's name in 1 to 100 characters.
form-field-suite = A suite's name is 1 to 100 characters (leave it empty for none).
form-field-capacity = Seats are a number from 1 to 10000.
form-field-equipment = Equipment is comma-separated tags of lower-case letters, digits and - (e.g. projector, video).
form-field-position = The position is a number from 1.
form-field-max-duration = The longest booking is 1 to 10080 minutes.
form-field-horizon = Bookable ahead is 1 to 3650 days (leave it empty for no limit).
form-field-buffer = Setup and cleanup time are 0 to 240 minutes.
form-field-repeat-until = Choose the date the repetition ends.
form-field-repeat = Choose how it repeats.
form-field-other = Please check what you entered.
form-refused-resubmitted = This form was already sent with other contents. Reload the page and try again.
form-refused-series-conflict = { $count ->
    [one] One date is already booked. You can book the other dates without it.
   *[other] { $count } dates are already booked. You can book the other dates without them.
}
form-refused-in-progress = The same request is being handled. Reload in a moment.
form-refused-busy = Too many requests right now. Please try again in a moment.

# The command line (`yeyak --help`, in English like the rest of its help;
# the product name `예약` beside `yeyak`, SPEC §19).
cli-about = yeyak (예약): meeting-room bookings and capacity reservations over PostgreSQL
delegates-heading = Delegates
delegates-intro = Delegates book, change and cancel rooms for you; you are the organizer and both of you get the mail.
delegates-remove = Remove
delegates-remove-named = Remove { $name } as delegate
delegates-add-label = Username of a new delegate
delegates-add = Add delegate
delegates-for-whom = You may book for:
delegates-added = { $name } may now book for you.
delegates-removed = { $name } may no longer book for you.
delegates-not-found = There is no such delegate of yours.
staff-delegates = Delegates (usernames)
staff-set-delegates = Set delegates
staff-delegates-set = Delegates of { $username } saved.
erased-person = Deleted user
staff-erase = Erase
staff-erase-confirm = Type { $username } again to erase this person
staff-erased = { $username } was erased: the account is now { $erased }, future bookings are cancelled and past ones keep no name.
staff-refused-erase-confirm = To erase { $username }, type the username again exactly.
restore-title = Restore a series
restore-intro = These occurrences were cancelled after repeated no-shows. Restore books each again where its room is still free.
restore-button = Restore the series
restore-nothing = Nothing to restore: this series was not cancelled for no-shows, or its occurrences are past.
restore-done = Restored { $restored }; { $missed } could not be booked again.
restore-restored = Booked again
restore-missed = Taken meanwhile
restore-back = My bookings

# Desks and floor plans (SPEC §28).
desk-unit = Desk booked for
desk-unit-day = The whole working day
desk-unit-am = The morning
desk-unit-pm = The afternoon
account-away-heading = Days away
account-away-hint = On these days others may book the desk assigned to you.
account-away-from = From
account-away-to = To (inclusive)
account-away-submit = Add days away
account-away-added = You are away from { $from } to { $to }.
form-field-desk-shape = A desk books alone: no suite, and no setup or cleanup time.
form-field-unit = Choose the whole day, the morning or the afternoon (for desks only).
form-field-kind = Choose room or desk.
form-field-assigned-to = Give the username of the person the desk is assigned to (desks only), or leave it empty.
form-field-place = The position on the plan is two fractions from 0 to 1 (x across, y down), or both empty.
form-field-away = Choose the first and last day away (the last not before the first, at most a year).
form-field-plan = Choose a PNG, JPEG or WebP image.
plan-title = Floor plan: { $name }
plan-date-nav = Day of the plan
plan-show = Show
plan-no-image = No plan image yet: the places are shown on a blank sheet.
plan-legend = What the marks mean
plan-places = Places
plan-no-places = No room or desk of this area is placed on the plan yet.
plan-book = Book { $code }
plan-place-heading = Place a room or desk
plan-place-hint = Type a code and its position (fractions from 0 to 1), or, where scripts run, click the plan to fill the position in. The room's form then opens to save it.
plan-place-room = Room or desk code
plan-place-open = Open its form
plan-state-free = free
plan-state-booked = booked
plan-state-yours = yours
plan-state-assigned = assigned
plan-state-away = holder away
plan-kind-desk = desk
plan-kind-room = room
plan-upload-heading = Floor plan
plan-open = Open the plan
plan-upload-file = Plan image
plan-upload-hint = PNG, JPEG or WebP, at most 5 MiB and 8000 × 8000 pixels.
plan-upload-submit = Upload the plan
plan-link = plan
room-field-kind = Kind
room-field-assigned-to = Assigned to
room-field-assigned-to-hint = A username, for desks only; empty: anyone may book it.
room-field-x = Position across the plan (x, 0–1)
room-field-y = Position down the plan (y, 0–1)
# Access records (SPEC §26)
access-log-title = Access records
access-log-hint = Every time an admin viewed or downloaded other people's personal data. Records cannot be changed and are removed only after their retention.
access-log-link = See the access records
access-log-range = From { $from }
access-log-none = No access records in this range.
access-log-key = API key ({ $tenant })
access-log-col-at = When
access-log-col-actor = Who
access-log-col-kind = What
access-log-col-subject = About whom
access-log-col-address = From address
access-log-col-people = People
access-kind-staff-list = Staff list page
access-kind-staff-api-list = Staff list (API)
access-kind-bookings-csv = Bookings CSV
access-kind-export = Personal data export
access-kind-history = Another person's booking history
access-kind-erase = Personal data erased

account-export-heading = Download my data
account-export-hint = Everything yeyak keeps about you (your account, bookings with their history, series, delegates, app passwords, sessions, mail sent to you and who looked at your data) as one JSON file, or your bookings as a calendar file (.ics).
account-export-json = Download all my data (.json)
account-export-ics = Download my bookings (.ics)
access-log-truncated = This range has more records than the newest { $count } shown here. Choose a shorter range.
