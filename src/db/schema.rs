//! Diesel table definitions, kept by hand beside `migrations/`.
//! A migration test (tests/migrations.rs) runs every migration up and down.

diesel::table! {
    area (code) {
        code -> Text,
        name -> Text,
        time_zone -> Nullable<Text>,
        working_hours -> Jsonb,
        restrict_to_working_hours -> Bool,
        closed_on_holidays -> Bool,
        position -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        holiday_calendar -> Nullable<Text>,
    }
}

diesel::table! {
    holiday_calendar (code) {
        code -> Text,
        name -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    holiday (calendar, day) {
        calendar -> Text,
        day -> Date,
        name -> Text,
    }
}

diesel::table! {
    room (code) {
        code -> Text,
        name -> Text,
        position -> Int4,
        area -> Text,
        capacity -> Int4,
        equipment -> Array<Text>,
        suite -> Nullable<Text>,
        check_in_required -> Bool,
        approval_required -> Bool,
        max_duration_minutes -> Int4,
        horizon_days -> Nullable<Int4>,
        active -> Bool,
        retired_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        buffer_before_minutes -> Int4,
        buffer_after_minutes -> Int4,
        kind -> Text,
        assigned_to -> Nullable<Int8>,
        plan_x -> Nullable<Float8>,
        plan_y -> Nullable<Float8>,
    }
}

diesel::table! {
    reservation (id) {
        id -> Int8,
        title -> Text,
        organizer_name -> Text,
        organizer_digest -> Text,
        starts_at -> Timestamptz,
        ends_at -> Timestamptz,
        cancelled_at -> Nullable<Timestamptz>,
        version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        status -> Text,
        series_id -> Nullable<Int8>,
        occurrence_start -> Nullable<Timestamptz>,
        is_exception -> Bool,
        organizer_staff_id -> Nullable<Int8>,
        check_in_required -> Bool,
        checked_in_at -> Nullable<Timestamptz>,
        released_at -> Nullable<Timestamptz>,
        decided_at -> Nullable<Timestamptz>,
        decision_reason -> Nullable<Text>,
        organizer_tenant -> Nullable<Text>,
        booked_by -> Nullable<Int8>,
        released_until -> Nullable<Timestamptz>,
        private -> Bool,
        anonymised_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    booking_series (id) {
        id -> Int8,
        title -> Text,
        organizer_name -> Text,
        organizer_digest -> Text,
        organizer_staff_id -> Nullable<Int8>,
        rooms -> Array<Text>,
        recurrence -> Text,
        starts_at -> Timestamptz,
        ends_at -> Timestamptz,
        timezone -> Text,
        version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        booked_by -> Nullable<Int8>,
        struck_at -> Nullable<Timestamptz>,
        restored_at -> Nullable<Timestamptz>,
        private -> Bool,
        anonymised_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    booking_event (id) {
        id -> Int8,
        reservation_id -> Int8,
        at -> Timestamptz,
        action -> Text,
        actor -> Text,
        changes -> Jsonb,
        /// The writing transaction's id (CalDAV sync tokens, `dav::sync`).
        txid -> Int8,
        actor_for -> Nullable<Text>,
        actor_staff_id -> Nullable<Int8>,
        actor_for_staff_id -> Nullable<Int8>,
    }
}

diesel::table! {
    delegation (person, delegate) {
        person -> Int8,
        delegate -> Int8,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    reservation_room (reservation_id, room) {
        reservation_id -> Int8,
        room -> Text,
        starts_at -> Timestamptz,
        ends_at -> Timestamptz,
        active -> Bool,
        buffer_before_minutes -> Int4,
        buffer_after_minutes -> Int4,
        desk_holder -> Nullable<Text>,
    }
}

diesel::table! {
    idempotency_record (tenant, operation, idempotency_key) {
        tenant -> Text,
        operation -> Text,
        idempotency_key -> Text,
        fingerprint -> Text,
        state -> Text,
        owner_token -> Uuid,
        lease_expires_at -> Timestamptz,
        response_status -> Nullable<Int2>,
        response_body -> Nullable<Text>,
        created_at -> Timestamptz,
        completed_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    api_key (id) {
        id -> Int8,
        tenant -> Text,
        role -> Text,
        key_hash -> Text,
        label -> Text,
        created_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    capacity_resource (id) {
        id -> Int8,
        code -> Text,
        name -> Text,
        capacity -> Int4,
        occupied_count -> Int4,
        revision -> Int8,
        policy_version -> Int4,
        timezone -> Text,
        state -> Text,
        last_sequence -> Int8,
        waiting_count -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    waitlist_entry (id) {
        id -> Int8,
        resource_id -> Int8,
        owner_digest -> Text,
        sequence -> Int8,
        state -> Text,
        quantity -> Int4,
        revision -> Int8,
        policy_version -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    capacity_hold (id) {
        id -> Int8,
        resource_id -> Int8,
        owner_digest -> Text,
        state -> Text,
        quantity -> Int4,
        revision -> Int8,
        policy_version -> Int4,
        expires_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    capacity_offer (id) {
        id -> Int8,
        resource_id -> Int8,
        entry_id -> Int8,
        owner_digest -> Text,
        state -> Text,
        quantity -> Int4,
        revision -> Int8,
        expires_at -> Timestamptz,
        hold_id -> Nullable<Int8>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(waitlist_entry -> capacity_resource (resource_id));
diesel::joinable!(capacity_hold -> capacity_resource (resource_id));
diesel::joinable!(capacity_offer -> capacity_resource (resource_id));
diesel::joinable!(capacity_offer -> waitlist_entry (entry_id));
diesel::joinable!(reservation_room -> reservation (reservation_id));
diesel::joinable!(booking_event -> reservation (reservation_id));
diesel::joinable!(reservation -> booking_series (series_id));
diesel::joinable!(reservation_room -> room (room));
diesel::allow_tables_to_appear_in_same_query!(
    room,
    reservation,
    reservation_room,
    idempotency_record,
    api_key,
    booking_series,
    booking_event
);

diesel::table! {
    notification_outbox (delivery_id, channel) {
        delivery_id -> Text,
        channel -> Text,
        kind -> Text,
        payload -> Jsonb,
        status -> Text,
        attempt_count -> Int4,
        next_attempt_at -> Nullable<Timestamptz>,
        claimed_by -> Nullable<Uuid>,
        claim_expires_at -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
        delivered_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    notification_attempt (delivery_id, channel, attempt, worker) {
        delivery_id -> Text,
        channel -> Text,
        attempt -> Int4,
        worker -> Uuid,
        attempted_at -> Timestamptz,
        outcome -> Text,
        detail -> Nullable<Text>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(notification_outbox, notification_attempt);

diesel::table! {
    staff_user (id) {
        id -> Int8,
        username -> Text,
        display_name -> Text,
        password_hash -> Text,
        is_admin -> Bool,
        created_at -> Timestamptz,
        email -> Nullable<Text>,
        calendar_generation -> Int4,
        disabled_at -> Nullable<Timestamptz>,
        configured_password_hash -> Nullable<Text>,
        source -> Text,
        last_sign_in_at -> Nullable<Timestamptz>,
        language -> Nullable<Text>,
        time_zone -> Nullable<Text>,
        erased_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    staff_session (token_hash) {
        token_hash -> Text,
        user_id -> Int8,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        id_token -> Nullable<Text>,
    }
}

diesel::table! {
    staff_identity (user_id) {
        user_id -> Int8,
        issuer -> Text,
        subject -> Text,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(staff_session -> staff_user (user_id));
diesel::joinable!(staff_identity -> staff_user (user_id));
diesel::allow_tables_to_appear_in_same_query!(staff_user, staff_session, staff_identity);

diesel::table! {
    staff_login_throttle (username) {
        username -> Text,
        failures -> Int4,
        window_start -> Timestamptz,
        locked_until -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    room_display_token (id) {
        id -> Int8,
        room -> Text,
        token_hash -> Text,
        created_by -> Nullable<Int8>,
        created_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    app_password (id) {
        id -> Int8,
        staff_id -> Int8,
        label -> Text,
        digest -> Text,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    dav_event (staff_id, uid) {
        staff_id -> Int8,
        uid -> Text,
        name -> Text,
        reservation_id -> Nullable<Int8>,
        series_id -> Nullable<Int8>,
        created_at -> Timestamptz,
        id -> Int8,
        body -> Nullable<Text>,
        starts_at -> Nullable<Timestamptz>,
        ends_at -> Nullable<Timestamptz>,
        etag -> Nullable<Text>,
        component -> Text,
        updated_at -> Nullable<Timestamptz>,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(app_password -> staff_user (staff_id));
diesel::allow_tables_to_appear_in_same_query!(app_password, staff_user);

diesel::table! {
    calendar_feed_version (feed) {
        feed -> Text,
        version -> Int8,
        changed_at -> Timestamptz,
    }
}

diesel::allow_tables_to_appear_in_same_query!(delegation, staff_user);
diesel::table! {
    staff_away (staff_id, from_date, to_date) {
        staff_id -> Int8,
        from_date -> Date,
        to_date -> Date,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    area_plan (area) {
        area -> Text,
        content_type -> Text,
        image -> Bytea,
        width -> Int4,
        height -> Int4,
        etag -> Text,
        updated_at -> Timestamptz,
    }
}
