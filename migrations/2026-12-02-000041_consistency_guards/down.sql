ALTER TABLE capacity_offer DROP CONSTRAINT capacity_offer_matches_entry;
ALTER TABLE waitlist_entry DROP CONSTRAINT waitlist_entry_offer_terms;
ALTER TABLE reservation
    DROP CONSTRAINT reservation_released_was_no_show,
    DROP CONSTRAINT reservation_checked_in_needs_check_in,
    DROP CONSTRAINT reservation_reason_has_decision,
    DROP CONSTRAINT reservation_rejected_was_decided;
