# Messages of the JSON API's errors, one per code (SPEC §7, §19). The code
# is the contract; the message is for people.
api-MALFORMED_REQUEST = Please check the request: { $field } ({ $reason })
api-IDEMPOTENCY_KEY_REQUIRED = An Idempotency-Key header is required.
api-UNAUTHENTICATED = A valid `Authorization: Bearer <api key>` is required.
api-FORBIDDEN =
    { $reason ->
        [display_own_room] A door display may book its own room only.
        [app_password_person] Only a signed-in person may create app passwords.
       *[other] You may not do this.
    }
api-OWNER_MISMATCH = This belongs to another owner.
api-NOT_FOUND = Not found: { $what }
api-IDEMPOTENCY_FINGERPRINT_CONFLICT = This Idempotency-Key was already used for a different request.
api-COMMAND_IN_PROGRESS = The same request is in progress; retry shortly.
api-CAPACITY_EXHAUSTED_OR_STALE = No capacity is left, or it changed meanwhile.
api-STALE_REVISION = It changed meanwhile (current revision { $currentRevision }).
api-POLICY_VERSION_MISMATCH = The policy version differs.
api-RESOURCE_CLOSED = This resource is closed.
api-INVALID_STATE =
    { $what ->
        [booking]
            { $state ->
                [CANCELLED] This booking is already cancelled.
                [REJECTED] This booking was rejected.
                [RELEASED] This booking was released automatically.
                [PENDING] This booking awaits approval.
                [CONFIRMED] This booking is confirmed.
               *[other] Not possible in the current state.
            }
        [room]
            { $state ->
                [RETIRED] This room is retired.
               *[other] Not possible in the current state.
            }
       *[other] Not possible in the current state.
    }
api-CAPACITY_AVAILABLE = Capacity is still available: take a hold instead of waiting.
api-HOLD_EXPIRED = The hold has expired.
api-OFFER_EXPIRED = The offer has expired.
api-PAYLOAD_TOO_LARGE = The request body is too large.
api-UNSUPPORTED_MEDIA_TYPE = The body must be application/json.
api-ADMISSION_REJECTED = Too busy right now; retry shortly.
api-ROOM_TIME_TAKEN = This time is already booked
api-ROOM_BUFFER_TAKEN = This overlaps another meeting's setup or cleanup time
api-ROOM_COMBINATION_NOT_ALLOWED =
    { $reason ->
        [suite_run] Only adjoining rooms may be booked together. For example { $examples }; { $first }+{ $last } cannot skip the rooms between.
        [suite_gap] Only adjoining rooms may be booked together. A room in between cannot be skipped.
       *[other] Only adjoining rooms may be booked together. Book rooms of different suites, or outside any suite, separately.
    }
api-UNKNOWN_ROOM = Unknown room: { $room }
api-INVALID_TIME_RANGE = The end must be after the start.
api-TIME_NOT_MINUTE_ALIGNED = Booking times must be whole minutes (seconds must be 0).
api-BOOKING_TOO_LONG = A booking may last at most { $maxMinutes } minutes.
api-BOOKING_IN_PAST = A time in the past cannot be booked.
api-BEYOND_HORIZON = This room may be booked at most { $horizonDays } days ahead.
api-SERIES_TOO_LONG =
    { $limit ->
        [years] A series must end within { $maxYears } years of its first occurrence.
       *[occurrences] A series may have at most { $maxOccurrences } occurrences.
    }
api-INVALID_RECURRENCE = The recurrence rule is not understood: { $reason }
api-VERSION_CONFLICT = The booking changed meanwhile (current version { $currentVersion }); reload it.
api-NOT_ORGANIZER = Only the organizer or an admin may change it.
api-RESOURCE_CODE_TAKEN = A resource with this code exists.
api-QUOTA_EXCEEDED = Each person may have at most { $maxActiveBookings } upcoming bookings.
api-CHECK_IN_CLOSED = Check-in is open from { $opensMinutesBefore } minutes before the start until { $closesMinutesAfter } minutes after it.
api-CHECK_IN_NOT_REQUIRED = This booking needs no check-in.
api-SERIES_CONFLICT =
    { $conflicts ->
        [one] One date is already booked.
       *[other] { $conflicts } dates are already booked.
    } To book only the rest, send onConflict as skip.
api-ROOM_CODE_TAKEN = A room with this code exists: { $code }
api-AREA_CODE_TAKEN = An area with this code exists: { $code }
api-INVALID_TIME_ZONE = Not a time zone name (IANA, e.g. Asia/Seoul): { $timeZone }
api-HOLIDAY_CALENDAR_CODE_TAKEN = A holiday calendar with this code exists: { $code }
api-OUTSIDE_WORKING_HOURS = Rooms in { $area } may be booked only inside its working hours.
api-AREA_CLOSED = { $area } is closed on { $date }: { $holiday }
api-ROOM_POSITION_TAKEN = Position { $position } in { $area } already holds another room.
api-SUITE_IN_OTHER_AREA = The rooms of suite { $suite } must be in one area.
api-ROOM_HAS_FUTURE_BOOKINGS =
    { $count ->
        [one] This room has one upcoming booking.
       *[other] This room has { $count } upcoming bookings.
    } To cancel them with it, set cancelFutureBookings.
api-QUANTITY_EXCEEDS_CAPACITY = The quantity asked for exceeds the capacity.
api-ALREADY_WAITING = You are already waiting for this resource.
api-HOLD_LIFETIME_EXCEEDED = The hold would outlive its longest allowed life.
api-RESERVED_TENANT = This tenant name is reserved: { $tenant }
api-ROOM_REQUIRED = Invite at least one room (an attendee such as room-a@…).
api-DATABASE_UNAVAILABLE = The database is briefly unreachable; retry.
api-INTERNAL = Internal error (request { $requestId }).
api-INTERNAL-plain = Internal error.
api-TOO_MANY_HREFS = Ask for at most { $max } addresses at once.
api-TOO_MANY_ATTENDEES = Ask for at most { $max } attendees at once.
api-WINDOW_TOO_LONG = Ask for at most { $maxDays } days at once.
api-TOO_MANY_HREFS-plain = Too many addresses at once.
api-TOO_MANY_ATTENDEES-plain = Too many attendees at once.
api-WINDOW_TOO_LONG-plain = Too long a window at once.

# The same without arguments, for an error whose details lack them.
api-MALFORMED_REQUEST-plain = Please check the request.
api-NOT_FOUND-plain = Not found.
api-STALE_REVISION-plain = It changed meanwhile.
api-UNKNOWN_ROOM-plain = Unknown room.
api-BOOKING_TOO_LONG-plain = This is longer than a booking may last.
api-BEYOND_HORIZON-plain = This room may not be booked that far ahead.
api-VERSION_CONFLICT-plain = The booking changed meanwhile; reload it.
api-QUOTA_EXCEEDED-plain = Each person has a limit of upcoming bookings.
api-SUITE_IN_OTHER_AREA-plain = The rooms of a suite must be in one area.
api-RESERVED_TENANT-plain = This tenant name is reserved.
api-FORBIDDEN-plain = You may not do this.
api-INVALID_STATE-plain = Not possible in the current state.
api-ROOM_COMBINATION_NOT_ALLOWED-plain = Only adjoining rooms may be booked together.
api-SERIES_TOO_LONG-plain = The series is too long.
api-INVALID_RECURRENCE-plain = The recurrence rule is not understood.
api-CHECK_IN_CLOSED-plain = Check-in is not open now.
api-SERIES_CONFLICT-plain = Some dates are already booked.
api-ROOM_CODE_TAKEN-plain = A room with this code exists.
api-AREA_CODE_TAKEN-plain = An area with this code exists.
api-INVALID_TIME_ZONE-plain = Not a time zone name (IANA, e.g. Asia/Seoul).
api-HOLIDAY_CALENDAR_CODE_TAKEN-plain = A holiday calendar with this code exists.
api-OUTSIDE_WORKING_HOURS-plain = Rooms may be booked only inside working hours.
api-AREA_CLOSED-plain = The area is closed on that day.
api-ROOM_POSITION_TAKEN-plain = This position is taken.
api-ROOM_HAS_FUTURE_BOOKINGS-plain = This room has upcoming bookings.
api-PASSWORD_LOGIN_OFF = Local accounts are off here (YEYAK_PASSWORD_LOGIN is not on); company accounts are made at their first sign-in.
api-USERNAME_TAKEN = A person with this username exists.
api-SERIES_NOT_STRUCK = This series was not cancelled for repeated no-shows; there is nothing to restore.
api-UID_CONFLICT = This UID belongs to another event.

# Desks and floor plans (SPEC §28).
api-DESK_ALREADY_BOOKED = You already have a desk for that half day.
api-DESK_ASSIGNED = This desk is assigned to someone who is not away that day.
api-INVALID_IMAGE = The plan must be a whole PNG, JPEG or WebP image of at most 8,000 × 8,000 pixels.
api-ALREADY_ERASED = This person was erased already; there is nothing left to erase.
api-BREAK_GLASS_ACCOUNT = The break-glass administrator set by YEYAK_ADMIN_USER cannot be erased.
