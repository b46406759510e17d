# Messages of the JSON API's errors, one per code (SPEC §7, §19). The code
# is the contract; the message is for people. Korean is the default.
api-MALFORMED_REQUEST = 요청을 확인해 주세요: { $field } ({ $reason })
api-IDEMPOTENCY_KEY_REQUIRED = Idempotency-Key 헤더가 필요합니다.
api-UNAUTHENTICATED = 올바른 `Authorization: Bearer <API 키>`가 필요합니다.
api-FORBIDDEN =
    { $reason ->
        [display_own_room] 도어 디스플레이는 자기 회의실만 예약할 수 있습니다.
        [app_password_person] 앱 비밀번호는 로그인한 사람만 만들 수 있습니다.
       *[other] 이 작업을 할 권한이 없습니다.
    }
api-OWNER_MISMATCH = 다른 소유자의 자원입니다.
api-NOT_FOUND = 찾을 수 없습니다: { $what }
api-IDEMPOTENCY_FINGERPRINT_CONFLICT = 이 Idempotency-Key는 이미 다른 요청에 쓰였습니다.
api-COMMAND_IN_PROGRESS = 같은 요청을 처리하고 있습니다. 잠시 후 다시 시도해 주세요.
api-CAPACITY_EXHAUSTED_OR_STALE = 남은 자리가 없거나 정보가 바뀌었습니다.
api-STALE_REVISION = 그사이 바뀌었습니다 (현재 리비전 { $currentRevision }).
api-POLICY_VERSION_MISMATCH = 정책 버전이 다릅니다.
api-RESOURCE_CLOSED = 닫힌 자원입니다.
api-INVALID_STATE =
    { $what ->
        [booking]
            { $state ->
                [CANCELLED] 이미 취소된 예약입니다.
                [REJECTED] 거절된 예약입니다.
                [RELEASED] 자동 반납된 예약입니다.
                [PENDING] 승인을 기다리는 예약입니다.
                [CONFIRMED] 확정된 예약입니다.
               *[other] 지금 상태에서는 할 수 없습니다.
            }
        [room]
            { $state ->
                [RETIRED] 폐지된 회의실입니다.
               *[other] 지금 상태에서는 할 수 없습니다.
            }
       *[other] 지금 상태에서는 할 수 없습니다.
    }
api-CAPACITY_AVAILABLE = 아직 남은 자리가 있습니다. 대기 대신 바로 잡으세요.
api-HOLD_EXPIRED = 잡아 둔 시간이 지났습니다.
api-OFFER_EXPIRED = 제안 시간이 지났습니다.
api-PAYLOAD_TOO_LARGE = 요청 본문이 너무 큽니다.
api-UNSUPPORTED_MEDIA_TYPE = 본문은 application/json이어야 합니다.
api-ADMISSION_REJECTED = 지금은 요청이 많습니다. 잠시 후 다시 시도해 주세요.
api-ROOM_TIME_TAKEN = 이미 예약된 시간입니다
api-ROOM_BUFFER_TAKEN = 앞뒤 준비 시간과 겹칩니다
api-ROOM_COMBINATION_NOT_ALLOWED =
    { $reason ->
        [suite_run] 이어진 회의실만 함께 예약할 수 있습니다 (예: { $examples }). { $first }+{ $last }처럼 가운데를 건너뛸 수 없습니다.
        [suite_gap] 이어진 회의실만 함께 예약할 수 있습니다. 가운데 방을 건너뛸 수 없습니다.
       *[other] 이어진 회의실만 함께 예약할 수 있습니다. 서로 다른 묶음이거나 묶음이 없는 방은 따로 예약해 주세요.
    }
api-UNKNOWN_ROOM = 알 수 없는 회의실입니다: { $room }
api-INVALID_TIME_RANGE = 끝나는 시간은 시작 시간보다 뒤여야 합니다.
api-TIME_NOT_MINUTE_ALIGNED = 예약 시간은 분 단위로 정해야 합니다 (초는 0이어야 합니다).
api-BOOKING_TOO_LONG = 예약은 최대 { $maxMinutes }분까지 할 수 있습니다.
api-BOOKING_IN_PAST = 지난 시간은 예약할 수 없습니다.
api-BEYOND_HORIZON = 이 회의실은 { $horizonDays }일 앞까지만 예약할 수 있습니다.
api-SERIES_TOO_LONG =
    { $limit ->
        [years] 반복 예약은 첫 회부터 { $maxYears }년 안에 끝나야 합니다.
       *[occurrences] 반복 예약은 { $maxOccurrences }회까지 할 수 있습니다.
    }
api-INVALID_RECURRENCE = 반복 규칙을 이해할 수 없습니다: { $reason }
api-VERSION_CONFLICT = 예약이 그사이 바뀌었습니다 (현재 버전 { $currentVersion }). 다시 불러와 주세요.
api-NOT_ORGANIZER = 예약한 사람(또는 관리자)만 바꿀 수 있습니다.
api-RESOURCE_CODE_TAKEN = 이미 있는 자원 코드입니다.
api-QUOTA_EXCEEDED = 앞으로의 예약은 한 사람당 { $maxActiveBookings }건까지 할 수 있습니다.
api-CHECK_IN_CLOSED = 체크인은 시작 { $opensMinutesBefore }분 전부터 시작 후 { $closesMinutesAfter }분까지 할 수 있습니다.
api-CHECK_IN_NOT_REQUIRED = 이 예약은 체크인이 필요 없습니다.
api-SERIES_CONFLICT = 이미 예약된 날짜가 { $conflicts }개 있습니다. 나머지만 예약하려면 onConflict를 skip으로 보내 주세요.
api-ROOM_CODE_TAKEN = 이미 있는 회의실 코드입니다: { $code }
api-AREA_CODE_TAKEN = 이미 있는 구역 코드입니다: { $code }
api-INVALID_TIME_ZONE = 시간대 이름이 아닙니다 (IANA 이름, 예: Asia/Seoul): { $timeZone }
api-HOLIDAY_CALENDAR_CODE_TAKEN = 이미 있는 휴일 달력 코드입니다: { $code }
api-OUTSIDE_WORKING_HOURS = { $area } 구역은 근무 시간 안에만 예약할 수 있습니다.
api-AREA_CLOSED = { $date }은 { $area } 구역이 쉬는 날입니다: { $holiday }
api-ROOM_POSITION_TAKEN = { $area }의 { $position }번 자리에는 이미 다른 회의실이 있습니다.
api-SUITE_IN_OTHER_AREA = 묶음 { $suite }의 회의실은 한 구역에 있어야 합니다.
api-ROOM_HAS_FUTURE_BOOKINGS = 앞으로의 예약 { $count }건이 있습니다. 함께 취소하려면 cancelFutureBookings를 켜 주세요.
api-QUANTITY_EXCEEDS_CAPACITY = 요청한 수량이 전체 수용량보다 많습니다.
api-ALREADY_WAITING = 이미 이 자원을 기다리고 있습니다.
api-HOLD_LIFETIME_EXCEEDED = 잡아 둘 수 있는 최대 시간을 넘었습니다.
api-RESERVED_TENANT = 예약된 테넌트 이름입니다: { $tenant }
api-ROOM_REQUIRED = 회의실을 참석자로 초대해 주세요 (room-a@… 같은 주소).
api-DATABASE_UNAVAILABLE = 데이터베이스에 잠시 닿을 수 없습니다. 다시 시도해 주세요.
api-INTERNAL = 내부 오류가 났습니다 (요청 { $requestId }).
api-INTERNAL-plain = 내부 오류가 났습니다.
api-TOO_MANY_HREFS = 한 번에 최대 { $max }개 주소까지 물을 수 있습니다.
api-TOO_MANY_ATTENDEES = 한 번에 최대 { $max }명(곳)까지 물을 수 있습니다.
api-WINDOW_TOO_LONG = 한 번에 최대 { $maxDays }일까지 물을 수 있습니다.
api-TOO_MANY_HREFS-plain = 한 번에 물을 수 있는 주소가 너무 많습니다.
api-TOO_MANY_ATTENDEES-plain = 한 번에 물을 수 있는 참석자가 너무 많습니다.
api-WINDOW_TOO_LONG-plain = 한 번에 물을 수 있는 기간이 너무 깁니다.

# The same without arguments, for an error whose details lack them.
api-MALFORMED_REQUEST-plain = 요청을 확인해 주세요.
api-NOT_FOUND-plain = 찾을 수 없습니다.
api-STALE_REVISION-plain = 그사이 바뀌었습니다.
api-UNKNOWN_ROOM-plain = 알 수 없는 회의실입니다.
api-BOOKING_TOO_LONG-plain = 예약할 수 있는 최대 시간을 넘었습니다.
api-BEYOND_HORIZON-plain = 이 회의실은 그렇게 먼 날까지 예약할 수 없습니다.
api-VERSION_CONFLICT-plain = 예약이 그사이 바뀌었습니다. 다시 불러와 주세요.
api-QUOTA_EXCEEDED-plain = 한 사람이 잡을 수 있는 앞으로의 예약 수를 넘었습니다.
api-SUITE_IN_OTHER_AREA-plain = 묶음의 회의실은 한 구역에 있어야 합니다.
api-RESERVED_TENANT-plain = 예약된 테넌트 이름입니다.
api-FORBIDDEN-plain = 이 작업을 할 권한이 없습니다.
api-INVALID_STATE-plain = 지금 상태에서는 할 수 없습니다.
api-ROOM_COMBINATION_NOT_ALLOWED-plain = 이어진 회의실만 함께 예약할 수 있습니다.
api-SERIES_TOO_LONG-plain = 반복 예약이 너무 깁니다.
api-INVALID_RECURRENCE-plain = 반복 규칙을 이해할 수 없습니다.
api-CHECK_IN_CLOSED-plain = 지금은 체크인할 수 없습니다.
api-SERIES_CONFLICT-plain = 이미 예약된 날짜가 있습니다.
api-ROOM_CODE_TAKEN-plain = 이미 있는 회의실 코드입니다.
api-AREA_CODE_TAKEN-plain = 이미 있는 구역 코드입니다.
api-INVALID_TIME_ZONE-plain = 시간대 이름이 아닙니다 (IANA 이름, 예: Asia/Seoul).
api-HOLIDAY_CALENDAR_CODE_TAKEN-plain = 이미 있는 휴일 달력 코드입니다.
api-OUTSIDE_WORKING_HOURS-plain = 근무 시간 안에만 예약할 수 있습니다.
api-AREA_CLOSED-plain = 쉬는 날에는 예약할 수 없습니다.
api-ROOM_POSITION_TAKEN-plain = 이미 쓰인 자리입니다.
api-ROOM_HAS_FUTURE_BOOKINGS-plain = 앞으로의 예약이 있는 회의실입니다.
api-PASSWORD_LOGIN_OFF = 이곳에서는 로컬 계정을 만들 수 없습니다(YEYAK_PASSWORD_LOGIN이 on이 아님). 회사 계정은 처음 로그인할 때 만들어집니다.
api-USERNAME_TAKEN = 이미 있는 아이디입니다.
api-SERIES_NOT_STRUCK = 반복된 노쇼로 취소된 반복 예약이 아니어서 되살릴 것이 없습니다.
api-UID_CONFLICT = 이 UID는 이미 다른 일정이 쓰고 있습니다.

# 좌석과 층 평면도 (SPEC §28).
api-DESK_ALREADY_BOOKED = 그 반나절에는 이미 예약한 좌석이 있습니다.
api-DESK_ASSIGNED = 지정석입니다. 주인이 자리를 비우는 날에만 예약할 수 있습니다.
api-INVALID_IMAGE = 평면도는 8,000 × 8,000 픽셀 이하의 온전한 PNG, JPEG 또는 WebP 그림이어야 합니다.
api-ALREADY_ERASED = 이미 삭제된 사용자입니다. 더 지울 것이 없습니다.
api-BREAK_GLASS_ACCOUNT = YEYAK_ADMIN_USER로 정한 비상용 관리자 계정은 삭제할 수 없습니다.
